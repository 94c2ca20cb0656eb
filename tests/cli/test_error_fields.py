"""InputError names the option and the input it concerns, and has the advice in plain words:
an application shows its own wording without rewriting the message."""

from __future__ import annotations

import pytest

from metrics_core.cli import error_line, main
from metrics_core.errors import InputError
from metrics_core.io import read_qrels, read_run


def test_fields_default_to_none_and_the_message_is_unchanged():
    exc = InputError("bad", source="f.txt", line=2, hint="do this")
    assert (exc.option, exc.field, exc.plain_hint) == (None, None, None)
    assert str(exc) == exc.plain() == "f.txt, line 2: bad. do this"
    assert InputError("bad", hint="--x 1", plain_hint="").plain() == "bad"


def test_a_table_without_the_column_names_the_option_and_the_role():
    with pytest.raises(InputError) as info:
        read_qrels(b"xq,yd,zr\nq01,D01195,1\n", name="q.csv")
    exc = info.value
    assert str(exc) == (
        "q.csv: no query_id column found. columns found: xq, yd, zr. Name one of them with "
        "columns={'query_id': NAME}"
    )
    assert (exc.option, exc.field) == (None, "query_id")  # the library names its argument
    assert exc.plain() == "q.csv: no query_id column found. columns found: xq, yd, zr"
    assert error_line(exc) == (
        "q.csv: no query_id column found. columns found: xq, yd, zr. Name one of them with "
        "--columns query_id=NAME"
    )


def test_swapped_trec_files_name_both_options_in_str_and_none_in_plain():
    with pytest.raises(InputError) as info:
        read_run(b"q1 0 d1 1\n", name="run.txt")
    exc = info.value
    assert "did you swap qrels= and run=?" in str(exc) and exc.field == "run"
    assert "did you swap --qrels and --run?" in error_line(exc)
    assert "--" not in exc.plain() and "looks like a qrels line" in exc.plain()
    with pytest.raises(InputError) as info:
        read_qrels(b"q1 Q0 d1 1 2.5 tag\n", name="qrels.txt")
    assert info.value.field == "qrels" and "--" not in info.value.plain()
    assert str(info.value).startswith("qrels.txt, line 1: expected 4 columns, found 6")


def _files(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text(f"q1 Q0 d1 1 2.0 {name}\nq2 Q0 d2 1 1.0 {name}\n")
    return [
        "--qrels",
        str(tmp_path / "q.txt"),
        "--run",
        str(tmp_path / "a.txt"),
        "--run",
        str(tmp_path / "b.txt"),
    ]


@pytest.mark.parametrize("command", ["compare", "report"])
def test_an_unknown_baseline_names_the_option(tmp_path, capsys, monkeypatch, command):
    raised = []
    real = InputError.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raised.append(self)

    monkeypatch.setattr(InputError, "__init__", spy)
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    assert main([command, *_files(tmp_path), "--baseline", "zz", "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert "no run named 'zz'. --baseline must be one of: a, b" in err
    exc = raised[-1]
    assert (exc.option, exc.field) == ("--baseline", "baseline")
    assert exc.plain() == "no run named 'zz'. the baseline must be one of: a, b"


def test_contradicting_query_set_names_the_option(tmp_path, capsys, monkeypatch):
    raised = []
    real = InputError.__init__
    monkeypatch.setattr(
        InputError, "__init__", lambda self, *a, **k: (real(self, *a, **k), raised.append(self))[0]
    )
    assert (
        main(
            [
                "compare",
                *_files(tmp_path),
                "--baseline",
                "a",
                "--queries",
                "common",
                "-c",
                "--quiet",
            ]
        )
        == 2
    )
    assert "--queries common contradicts -c" in capsys.readouterr().err
    assert raised[-1].option == "--queries"


def test_library_errors_name_arguments_and_the_command_line_its_flags(tmp_path, capsys):
    """The library's messages speak of its arguments (``block_rows=``); the command line
    prints its flags in their place, through its one table (ARGUMENT_FLAGS)."""
    import metrics_core as mc
    from metrics_core.cli import ARGUMENT_FLAGS, command_line_words

    qrels = {"q1": {"d1": 1}}
    run = {"q1": {"d1": 1.0}}
    with pytest.raises(InputError) as info:
        mc.evaluate(qrels, run, ["AP"], tie_report=True, block_rows=10)
    text = str(info.value)
    assert "client= and block_rows=, or tie_report=True" in text and "--" not in text
    files = _files(tmp_path)
    assert main(["evaluate", *files[:4], "--tie-report", "--block-rows", "10", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Leave out --scheduler and --block-rows, or --tie-report" in err
    assert "=" not in err.split(". ", 1)[1]
    # every library word in the table is a flag on the command line, and words inside
    # other names are left alone
    assert all(flag.startswith(("--", "`ranklab")) for flag in ARGUMENT_FLAGS.values())
    assert command_line_words("raise limits=Limits(max_input_mb=...) (not my_run=)") == (
        "raise --max-input-mb N (not my_run=)"
    )
