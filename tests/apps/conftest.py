"""Scripts here are Streamlit apps for browser tests, not test modules: never import them."""

collect_ignore_glob = ["*.py"]
