"""RankLab's Streamlit entry point (placeholder until the explorer lands)."""

import streamlit as st

st.set_page_config(page_title="RankLab", layout="wide")
st.title("RankLab")
st.write("Evaluation workbench for search and retrieval systems.")
