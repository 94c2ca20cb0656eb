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
        What the user can do about it.

    Examples
    --------
    >>> str(InputError("expected 6 columns, found 4", source="run.txt", line=3,
    ...                hint="TREC run lines are: qid Q0 docid rank score tag"))
    'run.txt, line 3: expected 6 columns, found 4. TREC run lines are: qid Q0 docid rank score tag'
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None,
                 hint: str | None = None):
        self.problem = problem
        self.source = source
        self.line = line
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.source:
            where = str(self.source)
            if self.line is not None:
                where += f", line {self.line}"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        text = where + self.problem.rstrip(".")
        if self.hint:
            text += ". " + self.hint
        # one line, always: a message may quote user data or a library's multi-line text
        return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text


class InputWarning(UserWarning):
    """Something in the input that RankLab accepted but the user should know about."""
