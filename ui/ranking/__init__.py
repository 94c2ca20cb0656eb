"""Streamlit-side code of the ranking pages (Data, Overview, Per query, Breakdown, Click feedback, Learn)."""
