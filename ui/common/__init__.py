"""Streamlit-side code of the shared page skeleton, state basics, style, navigation, upload slot and downloads."""
