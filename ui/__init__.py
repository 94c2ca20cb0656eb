"""Streamlit-side helpers of the RankLab app (state, widgets, plotly figure builders)."""
