"""The Fusion page's Streamlit-side helpers: widget keys and the menus' labels."""
