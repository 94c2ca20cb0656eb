"""In Chromium: a visitor whose file the server refuses at its door (its memory past the
budget: HTTP 507, before Streamlit keeps the bytes) reads on the page, with nothing else
done, the app's one line for that file in its language: the file's name, the server's memory
full with other visitors' work now, what to do. Before, only Streamlit's chip on the file
said "AxiosError: Request failed with status code 507", and the page never ran.

The server runs with a budget of 1 MB (``RANKLAB_SERVER_MB``), so that every upload is
refused."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import streamlit_server
from tests.e2e.test_uploader_words_browser import _idle

pytestmark = pytest.mark.e2e

RUN = b"q1 Q0 d1 1 2.0 mine\nq1 Q0 d2 2 1.0 mine\n"
LINES = {
    None: (
        "my run.txt: the server's memory is full with other visitors' work now, so the file "
        "was not received. Try again in a few minutes, or evaluate it with the command line "
        "(ranklab evaluate --qrels QRELS --run RUN), which streams it"
    ),
    "es-ES": (
        "my run.txt: la memoria del servidor está llena ahora con el trabajo de otros "
        "visitantes, así que el archivo no se recibió. Vuelve a intentarlo en unos minutos, o "
        "evalúalo con la línea de comandos (ranklab evaluate --qrels QRELS --run RUN), que lo "
        "lee por bloques"
    ),
}


@pytest.fixture(scope="module")
def full_server():
    """An app server whose memory is always past its budget: every upload is refused."""
    with streamlit_server({"RANKLAB_SERVER_MB": "1"}) as url:
        yield url


@pytest.mark.parametrize("locale", [None, "es-ES"])
def test_a_refused_upload_is_said_on_the_page_in_one_line(full_server, new_page, locale):
    page = new_page(1280, 800, locale=locale)
    page.goto(full_server + "/data")
    _idle(page)
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    runs_box = page.locator('[data-testid="stFileUploader"]').nth(1)
    with page.expect_response(
        lambda r: "/_stcore/upload_file/" in r.url and r.request.method == "PUT"
    ) as sent:
        runs_box.locator("input[type=file]").set_input_files(
            files=[{"name": "my run.txt", "mimeType": "text/plain", "buffer": RUN}]
        )
    assert sent.value.status == 507  # refused at the door: nothing else is done after it
    # ... and the page runs by itself, and says it in the app's words and the visitor's language
    line = page.locator('[data-testid="stAlertContentError"]', has_text="my run.txt")
    line.wait_for(timeout=30_000)
    assert line.count() == 1
    assert " ".join(line.inner_text().split()) == LINES[locale]
    _idle(page)
    assert line.is_visible()
