"""Streamlit-side code of the Hash codes page."""
