"""``python -m metrics_core``: the command line."""

from metrics_core.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
