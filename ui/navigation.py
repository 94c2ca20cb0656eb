"""The app's page registry: sections and pages, in menu order.

Each entry is (script path relative to the project root, title, icon, url_path).
Every page script starts with ``ui.frame.page_setup()`` so it works the same when
opened from the menu or by its URL on a fresh server.
"""

SECTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    "Ranking": [
        ("pages/home.py", "Home", ":material/home:", "home"),
    ],
    "Detection & calibration": [],
    "Hashing": [],
    "Compare": [
        ("pages/compare.py", "Compare systems", ":material/compare_arrows:", "compare"),
    ],
    "Learn": [],
}
