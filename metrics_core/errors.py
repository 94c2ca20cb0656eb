"""Errors that RankLab reports to people, not programmers.

Every problem with user input is an :class:`InputError`: it names the file, the line
(when there is one), what is wrong and what to do. The command line prints it on one
line and exits with status 2; the app shows it in an error box and keeps what was
already loaded.
"""

from __future__ import annotations


class InputError(ValueError):
    """A problem with user-supplied data or arguments.

    Parameters
    ----------
    problem : str
        What is wrong, in plain words.
    source : str, optional
        The file (or object) the data came from.
    line : int, optional
        1-based line number in ``source``.
    hint : str, optional
        What the user can do about it, in the words of the command line and of Python
        (it may name command-line options or ``columns={...}``).
    option : str, optional
        The command-line option the problem concerns, e.g. ``"--baseline"``.
    field : str, optional
        The input the problem concerns under its library name (``"qrels"``, ``"run"``,
        ``"meta"``, ``"baseline"``, ``"measures"``, a column role such as ``"query_id"``):
        an application names its own widget for it.
    plain_hint : str, optional
        The same advice without command-line options or Python syntax, for people using an
        application (default: ``hint``). :meth:`plain` uses it; ``str()`` never does.

    Examples
    --------
    >>> str(InputError("expected 6 columns, found 4", source="run.txt", line=3,
    ...                hint="TREC run lines are: qid Q0 docid rank score tag"))
    'run.txt, line 3: expected 6 columns, found 4. TREC run lines are: qid Q0 docid rank score tag'
    >>> exc = InputError("no run named 'x'", hint="--baseline must be one of: a, b",
    ...                  option="--baseline", field="baseline", plain_hint="choose one of: a, b")
    >>> str(exc), exc.option, exc.field
    ("no run named 'x'. --baseline must be one of: a, b", '--baseline', 'baseline')
    >>> exc.plain()
    "no run named 'x'. choose one of: a, b"
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None,
                 hint: str | None = None, option: str | None = None, field: str | None = None,
                 plain_hint: str | None = None):
        self.problem = problem
        self.source = source
        self.line = line
        self.hint = hint
        self.option = option
        self.field = field
        self.plain_hint = plain_hint
        super().__init__(self._format())

    def plain(self) -> str:
        """The message in an application's words: ``plain_hint`` in place of ``hint``.

        Same file, line and problem as ``str(self)``; only the advice changes, and only
        when the raise site gave a ``plain_hint``.
        """
        return self._format(self.hint if self.plain_hint is None else self.plain_hint)

    def _format(self, hint: str | None = None) -> str:
        hint = self.hint if hint is None else hint
        where = ""
        if self.source:
            where = str(self.source)
            if self.line is not None:
                where += f", line {self.line}"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        text = where + self.problem.rstrip(".")
        if hint:
            text += ". " + hint
        # one line, always: a message may quote user data or a library's multi-line text
        return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text


class InputWarning(UserWarning):
    """Something in the input that RankLab accepted but the user should know about."""
