"""Errors that RankLab reports to people, not programmers.

Every problem with user input is an :class:`InputError`: it names the file, the line
(when there is one), what is wrong and what to do. The command line prints it on one
line and exits with status 2; the app shows it in an error box and keeps what was
already loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


def N_(text: str) -> str:
    """Mark ``text`` for the gettext catalogs and return it unchanged (the extractor,
    ``tools/i18n_catalogs.py``, finds ``N_("...")`` calls by name). The library's one marker
    (``metrics_core.validation`` and ``metrics_core.report.catalogs`` re-export it), here
    because this module sits lowest; the library keeps its words in English, and whoever
    shows a marked text translates it with ``translations(lang).gettext``.

    >>> N_("Audit rule")
    'Audit rule'
    """
    return text


def _identity(text: str) -> str:
    return text


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
    params : mapping, optional
        Values for the ``{name}`` fields of ``problem``, ``hint`` and ``plain_hint``. With
        ``params`` the three texts are templates (marked with :func:`N_` so that the
        catalogs hold them) filled with :meth:`str.format`; without, they are literal text.
        ``str()`` fills the English templates; ``plain(gettext)`` translates each template
        first, then fills it with the same values, so user data (file names, ids) is never
        translated nor read as a template.

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

    A template with values, translated for an application:

    >>> exc = InputError(N_("expected {want} columns, found {got}"), source="run.txt", line=3,
    ...                  params={"want": 6, "got": 4})
    >>> str(exc)
    'run.txt, line 3: expected 6 columns, found 4'
    >>> spanish = {"expected {want} columns, found {got}": "se esperaban {want} columnas, hay {got}",
    ...            "{source}, line {line}: ": "{source}, línea {line}: "}
    >>> exc.plain(lambda text: spanish.get(text, text))
    'run.txt, línea 3: se esperaban 6 columnas, hay 4'
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None,
                 hint: str | None = None, option: str | None = None, field: str | None = None,
                 plain_hint: str | None = None, params: Mapping[str, object] | None = None):
        self.params = dict(params) if params else {}
        #: the untranslated texts as given (templates when ``params`` is given)
        self.templates = {"problem": problem, "hint": hint, "plain_hint": plain_hint}
        self.problem = self._fill(problem, _identity)
        self.source = source
        self.line = line
        self.hint = self._fill(hint, _identity)
        self.option = option
        self.field = field
        self.plain_hint = self._fill(plain_hint, _identity)
        super().__init__(self._format(self.problem, self.hint, _identity))

    def _fill(self, template: str | None, gettext: Callable[[str], str]) -> str | None:
        if template is None:
            return None
        text = gettext(template)
        return text.format(**self.params) if self.params else text

    def plain(self, gettext: Callable[[str], str] | None = None) -> str:
        """The message in an application's words: ``plain_hint`` in place of ``hint``.

        Same file, line and problem as ``str(self)``; only the advice changes, and only
        when the raise site gave a ``plain_hint``. ``gettext`` (a callable str -> str, such
        as ``translations("es").gettext``) translates the texts marked for the catalogs and
        the "file, line" frame; texts it does not know stay in English.
        """
        tr = gettext or _identity
        hint_key = "hint" if self.templates["plain_hint"] is None else "plain_hint"
        return self._format(self._fill(self.templates["problem"], tr),
                            self._fill(self.templates[hint_key], tr), tr)

    def _format(self, problem: str | None, hint: str | None,
                gettext: Callable[[str], str]) -> str:
        where = ""
        if self.source:
            where = (gettext(N_("{source}, line {line}: ")).format(source=self.source, line=self.line)
                     if self.line is not None else f"{self.source}: ")
        elif self.line is not None:
            where = gettext(N_("line {line}: ")).format(line=self.line)
        text = where + (problem or "").rstrip(".")
        if hint:
            text += ". " + hint
        # one line, always: a message may quote user data or a library's multi-line text
        return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text


class InputWarning(UserWarning):
    """Something in the input that RankLab accepted but the user should know about."""
