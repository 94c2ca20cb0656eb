"""Home page."""

import streamlit as st

from ui.frame import page_setup

page_setup()
st.title("RankLab")
st.write("Evaluation workbench for search and retrieval systems.")
