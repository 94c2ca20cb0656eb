"""The app's page registry: sections and pages, in menu order.

Each entry is (script path relative to the project root, title, icon, url_path). Section
names and titles are marked with ``N_`` and translated where the pages are built (app.py),
in the visitor's language. Every page script is one ``with ui.common.frame.page(...)``
block, so it works the same when opened from the menu or by its URL on a fresh server.
"""

from metrics_core.report.catalogs import N_

SECTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    # Home, then the four tasks of the Home page in its order, then what serves them all
    N_("Start"): [
        ("pages/home.py", N_("Home"), ":material/home:", "home"),
    ],
    N_("Rankings"): [
        ("pages/data.py", N_("Data"), ":material/upload_file:", "data"),
        ("pages/overview.py", N_("Overview"), ":material/leaderboard:", "overview"),
        ("pages/per_query.py", N_("Per query"), ":material/list:", "per_query"),
        ("pages/breakdown.py", N_("Breakdown"), ":material/category:", "breakdown"),
        ("pages/fusion.py", N_("Fusion"), ":material/merge:", "fusion"),
    ],
    N_("Detection and calibration"): [
        ("pages/detection.py", N_("Detection"), ":material/radar:", "detection"),
        ("pages/calibration.py", N_("Calibration"), ":material/tune:", "calibration"),
        ("pages/dynamic_k.py", N_("Dynamic K"), ":material/filter_list:", "dynamic-k"),
    ],
    N_("Hash codes"): [
        ("pages/hashing.py", N_("Hash codes"), ":material/tag:", "hashing"),
    ],
    N_("Comparing systems"): [
        ("pages/compare.py", N_("Compare systems"), ":material/compare_arrows:", "compare"),
        ("pages/table.py", N_("Comparative table"), ":material/table_chart:", "table"),
    ],
    N_("More"): [
        ("pages/clicks.py", N_("Click feedback"), ":material/ads_click:", "clicks"),
        ("pages/history.py", N_("History"), ":material/history:", "history"),
        ("pages/learn.py", N_("Measures explained"), ":material/school:", "learn"),
    ],
}

#: The url_path of Home (app.py opens it from the root URL).
HOME = "home"

#: Pages (file stems) that show the status line of the loaded rankings and conventions:
#: the pages whose tables are made of the loaded qrels and runs.
RANKING_STATUS_PAGES = frozenset(
    {"data", "overview", "per_query", "breakdown", "clicks", "compare", "table", "fusion"}
)


def page_titles() -> dict[str, str]:
    """Script path -> title (English; translate with ``_`` where shown).

    >>> page_titles()["pages/table.py"]
    'Comparative table'
    """
    return {path: title for entries in SECTIONS.values() for path, title, _icon, _url in entries}


__all__ = ["SECTIONS", "HOME", "RANKING_STATUS_PAGES", "page_titles"]
