"""The app's page registry: sections and pages, in menu order.

Each entry is (script path relative to the project root, title, icon, url_path).
Every page script is one ``with ui.common.frame.page(...)`` block, so it works the same when
opened from the menu or by its URL on a fresh server.
"""

SECTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    "Ranking": [
        ("pages/home.py", "Home", ":material/home:", "home"),
        ("pages/data.py", "Data", ":material/upload_file:", "data"),
        ("pages/overview.py", "Overview", ":material/leaderboard:", "overview"),
        ("pages/per_query.py", "Per query", ":material/list:", "per_query"),
        ("pages/breakdown.py", "Breakdown", ":material/category:", "breakdown"),
        ("pages/clicks.py", "Click feedback", ":material/ads_click:", "clicks"),
        ("pages/history.py", "History", ":material/history:", "history"),
    ],
    "Detection & calibration": [
        ("pages/detection.py", "Detection", ":material/radar:", "detection"),
        ("pages/calibration.py", "Calibration", ":material/tune:", "calibration"),
        ("pages/dynamic_k.py", "Dynamic K", ":material/filter_list:", "dynamic-k"),
    ],
    "Hashing": [
        ("pages/hashing.py", "Hash codes", ":material/tag:", "hashing"),
    ],
    "Compare": [
        ("pages/compare.py", "Compare systems", ":material/compare_arrows:", "compare"),
    ],
    "Learn": [
        ("pages/learn.py", "Measures explained", ":material/school:", "learn"),
    ],
}
