"""Streamlit-side code of the History page and the save form other pages draw."""
