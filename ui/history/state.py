"""Session-state keys of the History page (namespaced ``ranklab.history.*``) and where
this visitor's history lives.

Hosted for many visitors, the app never writes where a visitor says: by default each
browser session has its own in-memory history (:data:`SESSION_STORE`), which the visitor
downloads as one file and uploads again later. Only the deployer can name a server-wide
store file, in Streamlit's secrets (``history_store = "/path/history.sqlite3"``) or in the
environment variable ``RANKLAB_HISTORY_STORE``; the page never shows that path.
"""

from __future__ import annotations

import os

import streamlit as st

from metrics_core.report.catalogs import N_

SESSION_STORE = "ranklab.history.session_store"  # HistoryStore(":memory:"): ui.history.data
UPLOAD = "ranklab.history.upload"  # prefix of the uploader's key (+ a nonce)
UPLOAD_NONCE = "ranklab.history.upload_nonce"  # bumped to clear the uploader
UPLOAD_SEEN = "ranklab.history.upload_seen"  # file id of the upload already read
UPLOAD_ERROR = "ranklab.history.upload_error"  # the last upload's error, shown once
VIEW = "ranklab.history.view"  # "Per evaluation" | "Per query"
SUITE = "ranklab.history.suite"  # suite filter ("All suites" or a name)
DATES = "ranklab.history.dates"  # date_input value: (from, to)
TREND_MEASURE = "ranklab.history.trend_measure"  # measure drawn over time
BATCH = "ranklab.history.batch"  # batch shown side by side
DELETE_ID = "ranklab.history.delete_id"  # evaluation id chosen for deletion
PENDING_DELETE = "ranklab.history.pending_delete"  # id awaiting confirmation, or None
SAVE_SUITE = "ranklab.history.save_suite"  # suite name typed in the save form
SAMPLE_VIEW = "ranklab.history.sample_view"  # HistoryStore(":memory:") of the sample, built once
DOWNLOAD = "ranklab.history.download"  # the "Download history" button
REPORT_DOWNLOAD = "ranklab.history.report"  # the comparative report's downloads
BATCH_CHART = "ranklab.history.batch_chart"
TREND_CHART = "ranklab.history.trend"
SAVE_FORM = "ranklab.history.save_form"  # prefix: + ".<page>" (the form other pages draw)

ENV_STORE = "RANKLAB_HISTORY_STORE"
SECRET_STORE = "history_store"
ALL_SUITES = N_("All suites")  # option values; shown translated
VIEWS = (N_("Per evaluation"), N_("Per query"))


def deployer_store_path() -> str | None:
    """The server-wide store file the deployer configured, or None (per-session history).

    ``st.secrets["history_store"]`` first, then ``$RANKLAB_HISTORY_STORE``. Nothing a
    visitor types reaches this.
    """
    try:
        value = st.secrets.get(SECRET_STORE)
    except Exception:  # no secrets file: streamlit raises rather than returning None
        value = None
    value = value or os.environ.get(ENV_STORE)
    return str(value).strip() or None if value else None


def is_shared() -> bool:
    return deployer_store_path() is not None
