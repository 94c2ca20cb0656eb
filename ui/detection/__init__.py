"""Streamlit-side code of the Detection, Calibration and Dynamic K pages."""
