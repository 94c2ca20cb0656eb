"""Home page: what RankLab is, and sample data one click away."""

import streamlit as st

from ui.common.frame import page, page_link
from ui.ranking.data import SAMPLE_SUMMARY, has_data, load_sample_into_state
from ui.ranking.state import Home

with page("RankLab"):
    st.write("Evaluation workbench for search and retrieval systems: exact like trec_eval, "
             "with every measure explained.")
    c1, c2 = st.columns(2)
    with c1:
        if st.button("Load sample data", type="primary", key=Home.SAMPLE, on_click=load_sample_into_state):
            st.success(SAMPLE_SUMMARY)
        page_link("pages/data.py", "Upload your own qrels and runs", ":material/upload_file:")
    with c2:
        if has_data():
            page_link("pages/overview.py", "Overview of every run", ":material/leaderboard:")
        page_link("pages/compare.py", "Is one system significantly better?", ":material/compare_arrows:")
        page_link("pages/learn.py", "How each measure is computed", ":material/school:")
