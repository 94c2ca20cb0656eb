"""Issue 29 in Chromium, in English and Spanish, at 1280x800 and 800x900: no run lost to a file
name (two files of one name stay two runs, the same file twice is one run, a file taken out
takes its run), a one-run board with no best or correction words, the answers on the first
screen (Detection's TPR/FPR and TPR@FPR table, Hash codes' P@1, Learn's definitions, the
comparative table's downloads, its Spanish CSV with semicolons, decimal commas and a BOM), no
"None"/"nan" on the main pages, no Judged@10 on the default board, download labels not cut.

One server for the module. Screenshots go to ``$RANKLAB_SHOTS`` when it is set.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import streamlit_server

pytestmark = pytest.mark.e2e

VIEWS = [("en", 1280, 800), ("es", 1280, 800), ("en", 800, 900), ("es", 800, 900)]
WORDS = {
    "en": {
        "sample": "Load sample data",
        "the_sample": "Load the sample",
        "tpr_table": "TPR at target FPR",
        "learn": "Every measure",
        "csv": "CSV",
        "same": "has the same content as file",
        "taken": "the name test_run was taken",
    },
    "es": {
        "sample": "Cargar datos de ejemplo",
        "the_sample": "Cargar el ejemplo",
        "tpr_table": "TPR a una FPR objetivo",
        "learn": "Todas las medidas",
        "csv": "CSV",
        "same": "tiene el mismo contenido que el archivo",
        "taken": "el nombre test_run ya estaba en uso",
    },
}
JUDGED = re.compile(r"30 (judgements|juicios)")
BAD_WORDS = re.compile(r"\bNone\b|\bnan\b|\bNaN\b")


@pytest.fixture(scope="module")
def base():
    with streamlit_server() as url:
        yield url


#: true once the app has run its script and runs none now (Streamlit's own script state on its
#: root element: "initial" before the session's first run ends), its status widget gone
IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.dataset.testScriptState === "notRunning"
        && !document.querySelector('[data-testid="stStatusWidget"]');
}"""


def _idle(page) -> None:
    """Wait until the app is idle; twice, 0.6 s apart: a widget's change (an upload, a click)
    asks for its rerun a moment after the event, which no attribute shows before it starts."""
    page.wait_for_function(IDLE, timeout=90_000)
    time.sleep(0.6)
    page.wait_for_function(IDLE, timeout=90_000)


def _open(browser, base: str, path: str, lang: str, width: int, height: int):
    ctx = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{base}/{path}?lang={lang}")
    _idle(page)
    return ctx, page


def _shot(page, name: str) -> None:
    folder = os.environ.get("RANKLAB_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _in_first_screen(locator, height: int) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 40) <= height


def _not_cut(page) -> list[str]:
    """The download buttons whose label is cut (its text wider than its box)."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stDownloadButton"] button')]
        .filter(b => b.offsetParent !== null)
        .map(b => [b.innerText, b.querySelector('p') || b])
        .filter(([t, e]) => e.scrollWidth > e.clientWidth + 1).map(([t]) => t)""")


def _menu(page, path: str) -> None:
    """Open ``path`` from the menu (the same session; the sidebar opened first when collapsed)."""
    link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').first
    box = link.bounding_box()
    if box is None or box["x"] < 0:  # the sidebar is collapsed (800 px): open it
        page.locator(
            '[data-testid="stExpandSidebarButton"], [data-testid="stSidebarCollapsedControl"] button'
        ).first.click()
        page.wait_for_function("(e) => e.getBoundingClientRect().x >= 0", arg=link.element_handle())
    link.click()
    _idle(page)


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


@pytest.mark.parametrize("lang,width,height", VIEWS)
def test_answers_on_the_first_screen(base, browser, lang, width, height):
    w = WORDS[lang]
    ctx, page = _open(browser, base, "detection", lang, width, height)
    try:
        # Detection: the operating point's TPR and FPR and the TPR@FPR table before any chart
        page.locator('[data-testid="stMetric"]', has_text="TPR").first.wait_for()
        assert _in_first_screen(
            page.locator('[data-testid="stMetric"]', has_text="TPR").first, height
        )
        assert _in_first_screen(
            page.locator('[data-testid="stMetric"]', has_text="FPR").first, height
        )
        assert _in_first_screen(page.get_by_text(w["tpr_table"], exact=True).first, height)
        assert not BAD_WORDS.search(_main_text(page))
        _shot(page, f"detection_{lang}_{width}")

        # Hash codes: P@1 on the first screen once the sample is loaded
        page.goto(f"{base}/hashing?lang={lang}")
        _idle(page)
        page.get_by_role("button", name=w["the_sample"]).first.click()
        _idle(page)
        p1 = page.get_by_text(re.compile(r"^P@1\b")).first
        p1.wait_for()
        assert _in_first_screen(p1, height)
        assert not BAD_WORDS.search(_main_text(page))
        _shot(page, f"hashing_{lang}_{width}")

        # Learn opens on the definitions
        page.goto(f"{base}/learn?lang={lang}")
        _idle(page)
        header = page.get_by_role("heading", name=w["learn"]).first
        assert _in_first_screen(header, height)
        cut = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMain"] button')]
            .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1).map(b => b.innerText)""")
        assert cut == [], cut
        _shot(page, f"learn_{lang}_{width}")

        # the comparative table: its downloads on the first screen, labels whole
        page.goto(f"{base}/table?lang={lang}")
        _idle(page)
        page.get_by_role("button", name=w["sample"]).first.click()
        _idle(page)
        csv = page.locator('[data-testid="stDownloadButton"]', has_text=w["csv"]).first
        csv.wait_for()
        assert _in_first_screen(csv, height)
        assert _not_cut(page) == []
        assert not BAD_WORDS.search(_main_text(page))
        _shot(page, f"table_{lang}_{width}")
        # its CSV as the visitor's spreadsheet opens it: Spanish, semicolons, decimal commas and a BOM
        with page.expect_download() as download:
            csv.locator("button").first.click()
        data = Path(download.value.path()).read_bytes()
        text = data.decode("utf-8-sig")
        if lang == "es":
            assert data.startswith(b"\xef\xbb\xbf") and "0,63175" in text and ";" in text, text[
                :300
            ]
        else:
            assert not data.startswith(b"\xef\xbb\xbf") and "0.63175" in text, text[:300]

        # the main ranking pages: no None / nan, download labels whole (English wide, Spanish narrow)
        for path in (
            ("overview", "per_query", "breakdown", "dynamic-k", "calibration")
            if (lang == "es") == (width == 800)
            else ()
        ):
            page.goto(f"{base}/{path}?lang={lang}")
            _idle(page)
            if page.get_by_role("button", name=w["sample"]).count():
                page.get_by_role("button", name=w["sample"]).first.click()
                _idle(page)
            text = _main_text(page)
            assert not BAD_WORDS.search(text), (path, BAD_WORDS.search(text))
            if path == "overview":  # a coverage diagnostic is off the default board
                assert "Judged@10" not in text
            assert _not_cut(page) == [], path
    finally:
        ctx.close()


def _run_file(tmp: Path, folder: str, tag: str, shift: float) -> Path:
    path = tmp / folder / "test_run.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        f"q{q} Q0 d{d} {d + 1} {10 - d + shift * ((q + d) % 3):.3f} {tag}"
        for q in range(1, 6)
        for d in range(6)
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("lang,width,height", [("en", 1280, 800), ("es", 800, 900)])
def test_no_run_is_lost_to_a_file_name(base, browser, tmp_path, lang, width, height):
    w = WORDS[lang]
    a, b = _run_file(tmp_path, "sysA", "sysA", 0.0), _run_file(tmp_path, "sysB", "sysB", 1.5)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(1, 6) for d in range(6)))
    ctx, page = _open(browser, base, "data", lang, width, height)
    try:
        inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
        inputs.nth(0).set_input_files(str(qrels))
        _idle(page)
        page.get_by_text(JUDGED).first.wait_for()  # the qrels loaded before the runs are dropped
        inputs.nth(1).set_input_files([str(a), str(b), str(a)])
        _idle(page)
        page.get_by_text(w["taken"]).first.wait_for()
        assert page.get_by_text(w["same"]).count() >= 1
        runs_box = page.locator('[data-testid="stFileUploader"]').nth(1)
        text = _main_text(page)
        assert "test_run (sysB)" in text
        _shot(page, f"runs_clash_{lang}_{width}")
        # every chip of the box is visible inside it, its remove button too, and the "+" to add more
        chips = runs_box.locator('[data-testid="stFileChip"]')
        assert chips.count() == 3
        frame = runs_box.locator('[data-testid="stFileUploaderDropzone"]').bounding_box()
        add = runs_box.locator('[data-testid="stBaseButton-borderlessIcon"]').first
        for element in (
            [chips.nth(i) for i in range(3)]
            + [chips.nth(i).locator("button").first for i in range(3)]
            + [add]
        ):
            assert element.is_visible()
            box = element.bounding_box()
            assert (
                frame["x"] <= box["x"]
                and box["x"] + box["width"] <= frame["x"] + frame["width"] + 1
            ), (box, frame)
            assert (
                frame["y"] <= box["y"]
                and box["y"] + box["height"] <= frame["y"] + frame["height"] + 1
            ), (box, frame)
        # the board lists both runs
        _menu(page, "overview")
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.locator('[role="row"]', has_text="test_run (sysB)").first.wait_for(state="attached")
        assert grid.locator('[role="row"]', has_text="test_run").count() >= 2
        # back on Data, the box is drawn anew (empty): that removes no run
        _menu(page, "data")
        _menu(page, "overview")
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.locator('[role="row"]', has_text="test_run (sysB)").first.wait_for(state="attached")
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["en", "es"])
def test_taking_a_file_out_removes_its_run_and_one_run_board_is_plain(
    base, browser, tmp_path, lang
):
    """A file taken out of the runs box takes its run and only its run, and a rerun of the
    page takes none: once parsed, a file's bytes leave the server, and ``st.file_uploader``
    then leaves it out of its value although its chip stays (the box used to look empty to the
    page, so every run went with the first rerun)."""
    expect = pytest.importorskip("playwright.sync_api").expect
    a, b = _run_file(tmp_path, "sysA", "sysA", 0.0), _run_file(tmp_path, "sysB", "sysB", 1.5)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(1, 6) for d in range(6)))
    ctx, page = _open(browser, base, "data", lang, 1280, 800)
    try:
        inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
        inputs.nth(0).set_input_files(str(qrels))
        _idle(page)
        page.get_by_text(JUDGED).first.wait_for()  # the qrels loaded before the runs are dropped
        inputs.nth(1).set_input_files([str(a), str(b)])
        _idle(page)
        main = page.locator('[data-testid="stMain"]')
        loaded = re.compile(r"(Loaded|Cargado): test_run \(30 [^)]+\), test_run \(sysB\)")
        expect(main.get_by_text(loaded).first).to_be_visible(timeout=90_000)
        # a rerun of the page (the app's "r" shortcut) keeps both runs
        page.locator("body").press("r")
        time.sleep(1)
        _idle(page)
        expect(main.get_by_text(loaded).first).to_be_visible(timeout=90_000)
        runs_box = page.locator('[data-testid="stFileUploader"]').nth(1)
        runs_box.locator('[data-testid="stFileChip"]').nth(1).locator(
            '[data-testid="stFileChipDeleteBtn"] button'
        ).click()
        _idle(page)
        one = re.compile(r"(Loaded|Cargado): test_run \(30 [^)]+\)$")
        expect(main.get_by_text(one).first).to_be_visible(timeout=90_000)
        assert "test_run (sysB)" not in _main_text(page)
        # the Overview of the run left: no best mark, no significance, no correction sentence
        _menu(page, "overview")
        expect(main.locator('[data-testid="stDataFrame"]').first).to_be_visible(timeout=90_000)
        expect(main.get_by_text(re.compile(r"1 (run|ejecución): test_run\b")).first).to_be_visible(
            timeout=90_000
        )
        text = main.inner_text()
        assert "test_run (sysB)" not in text
        assert "★" not in text
        assert "Holm" not in text and "0 comparisons" not in text and "0 comparaciones" not in text
        details = main.locator('[data-testid="stDataFrame"]').nth(1)
        details.locator('[role="columnheader"]').first.wait_for(state="attached")
        headers = " ".join(details.locator('[role="columnheader"]').all_inner_texts())
        assert "Significa" not in headers and "p (" not in headers, (
            headers
        )  # no test column for one run
        _shot(page, f"one_run_{lang}")
    finally:
        ctx.close()
