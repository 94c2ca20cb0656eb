"""Streamlit-side code of the Compare systems page."""
