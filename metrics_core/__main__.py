"""``python -m metrics_core``: the command line."""

from metrics_core.cli import run

if __name__ == "__main__":
    run()
