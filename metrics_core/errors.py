"""Errors that RankLab reports to people, not programmers.

Every problem with user input is an :class:`InputError`: it names the file, the line
(when there is one), what is wrong and what to do. The command line prints it on one
line and exits with status 2; the app shows it in an error box and keeps what was
already loaded.

The library's words name its own arguments, written ``name=`` (``block_rows=``,
``max_input_mb=``; :func:`argument` for one given as a value): the command line shows its
flags in their place (``--block-rows``), through its one table of them
(:data:`metrics_core.cli.ARGUMENT_FLAGS`, applied by :meth:`InputError.render`).
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


def fill(
    template: str, params: Mapping[str, object] | None, gettext: Callable[[str], str] | None = None
) -> str:
    """``template`` translated by ``gettext`` (default: kept in English), then filled with
    ``params`` by :meth:`str.format`; a :class:`Phrase` value is translated the same way,
    any other value (user data: a file name, an id) is inserted as it is. Without
    ``params`` the text is literal (braces stay).

    >>> fill("expected {want} columns, found {got}", {"want": 6, "got": 4})
    'expected 6 columns, found 4'
    >>> fill("no {role} column", {"role": Phrase(N_("score"))}, {"score": "puntuación",
    ...      "no {role} column": "no hay columna de {role}"}.get)
    'no hay columna de puntuación'
    """
    tr = gettext or _identity
    if isinstance(template, Phrase):
        return template.translate(tr)
    text = tr(template) if template else template  # gettext("") is the catalog's header
    if not params:
        return text
    return text.format(
        **{k: v.translate(tr) if isinstance(v, Phrase) else v for k, v in params.items()}
    )


class Phrase(str):
    """Library wording inside another message: a ``str`` equal to its English text that
    remembers its template and values, so that :meth:`InputError.plain` translates it.

    Use it for a value that is itself the library's words (a column role, "query id",
    "run lines are: ...") or for a message built from parts (a "row 3: " prefix and a
    problem). User data never goes in a template: it goes in ``params``.

    Parameters
    ----------
    template : str
        English text marked with :func:`N_` (a template when ``params`` is given), or
        another :class:`Phrase`.
    params : mapping, optional
        Values for the template's ``{name}`` fields (Phrases are translated in turn).

    Examples
    --------
    >>> p = Phrase(N_("row {row}: "), {"row": 3})
    >>> p, p.translate({"row {row}: ": "fila {row}: "}.get)
    ('row 3: ', 'fila 3: ')
    """

    template: str
    params: dict

    def __new__(cls, template: str, params: Mapping[str, object] | None = None):
        params = dict(params) if params else {}
        obj = super().__new__(cls, fill(template, params))
        obj.template = template
        obj.params = params
        return obj

    # str.translate(table) is not used on a Phrase: here the name means gettext, which is
    # what callers of a Phrase want
    def translate(  # type: ignore[override]  # deliberately not str's translate(table)
        self, gettext: Callable[[str], str] | None = None
    ) -> str:
        """The text through ``gettext`` (a callable str -> str; default: English)."""
        return fill(self.template, self.params, gettext)


def argument(name: str, value: str = "") -> Phrase:
    """A library argument as a message names it, ``name=value`` (``score_col=``), for a
    value of a template: a :class:`Phrase` without a catalog entry (an argument's name is
    not translated), which the command line's words turn into its flag.

    >>> argument("score_col"), argument("tie_report", "True").translate({"tie_report=True": "--tie-report"}.get)
    ('score_col=', '--tie-report')
    """
    words = name + "=" + value  # an argument's name is not translated: no catalog entry
    return Phrase(words)


def prefixed(prefix: str, problem: str) -> Phrase:
    """``prefix + problem`` (e.g. ``"row 3: "`` and a problem) as one translatable
    :class:`Phrase`; each part is translated on its own (plain strings stay as they are).

    >>> prefixed(Phrase(N_("row {row}: "), {"row": 3}), Phrase(N_("empty query id")))
    'row 3: empty query id'
    """
    return Phrase(N_("{prefix}{problem}"), {"prefix": prefix, "problem": problem})


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
        The command-line option the problem concerns, e.g. ``"--baseline"``: given by the
        command line's own checks only (the library names its arguments, in ``field``).
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
        translated nor read as a template. A value that is itself the library's words is a
        :class:`Phrase` (translated too). ``problem``, ``hint`` and ``plain_hint`` may also
        be Phrases, which carry their own values.

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

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        option: str | None = None,
        field: str | None = None,
        plain_hint: str | None = None,
        params: Mapping[str, object] | None = None,
    ):
        self.params = dict(params) if params else {}
        #: the untranslated texts as given (templates when ``params`` is given)
        self.templates = {"problem": problem, "hint": hint, "plain_hint": plain_hint}
        self.problem = fill(problem, self.params, _identity)
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
        return fill(template, self.params, gettext)

    def phrase(self, part: str = "problem") -> Phrase | None:
        """``problem``, ``hint`` or ``plain_hint`` as a :class:`Phrase` (template and
        values), to quote in another message or to give to :meth:`replace`, translatable
        still; None where the error has no such text.

        >>> exc = InputError(N_("no {role} column"), params={"role": "score"})
        >>> p = exc.phrase()
        >>> p, p.template
        ('no score column', 'no {role} column')
        """
        template = self.templates[part]
        if template is None or isinstance(template, Phrase):
            return template
        return Phrase(template, self.params)

    def replace(self, **changes) -> InputError:
        """A copy with some fields changed (``problem``, ``source``, ``line``, ``hint``,
        ``option``, ``field``, ``plain_hint``), the other texts keeping their templates
        and values, so that :meth:`plain` still translates them. A new text given as a
        plain ``str`` is literal; give a :class:`Phrase` (e.g. :meth:`phrase`) to keep it
        translatable.

        >>> exc = InputError(N_("expected {want} columns"), source="a.txt", line=2,
        ...                  hint=N_("Check the file"), params={"want": 6})
        >>> new = exc.replace(source="b.txt", hint="Choose another file")
        >>> str(new), new.templates["problem"]
        ('b.txt, line 2: expected 6 columns. Choose another file', 'expected {want} columns')
        """
        unknown = set(changes) - {
            "problem",
            "source",
            "line",
            "hint",
            "option",
            "field",
            "plain_hint",
        }
        if unknown:
            raise TypeError(f"replace() got unexpected fields {sorted(unknown)}")
        texts: dict[str, str | None] = {}
        for part in ("problem", "hint", "plain_hint"):
            if part not in changes:
                texts[part] = self.templates[part]
            else:
                value = changes[part]
                texts[part] = value if value is None or isinstance(value, Phrase) else Phrase(value)
        problem = texts["problem"]
        if problem is None:
            raise TypeError("replace() needs a problem, not None")
        return InputError(
            problem,
            source=changes.get("source", self.source),
            line=changes.get("line", self.line),
            hint=texts["hint"],
            option=changes.get("option", self.option),
            field=changes.get("field", self.field),
            plain_hint=texts["plain_hint"],
            params=self.params,
        )

    def render(self, gettext: Callable[[str], str] | None = None, *, plain: bool = False) -> str:
        """The message with every text of the library (templates, :class:`Phrase` values,
        the "file, line" frame) first passed through ``gettext``; user data is never passed.
        ``str(self)`` is ``render()``; the command line renders with its words (the
        library's argument names as its flags); :meth:`plain` is ``render(gettext,
        plain=True)``.

        >>> exc = InputError(N_("{count} rows"), hint=N_("Raise block_rows="), params={"count": 3})
        >>> exc.render(lambda t: t.replace("block_rows=", "--block-rows"))
        '3 rows. Raise --block-rows'
        """
        if plain:
            return self.plain(gettext)
        tr = gettext or _identity
        return self._format(
            self._fill(self.templates["problem"], tr), self._fill(self.templates["hint"], tr), tr
        )

    def plain(self, gettext: Callable[[str], str] | None = None) -> str:
        """The message in an application's words: ``plain_hint`` in place of ``hint``.

        Same file, line and problem as ``str(self)``; only the advice changes, and only
        when the raise site gave a ``plain_hint``. ``gettext`` (a callable str -> str, such
        as ``translations("es").gettext``) translates the texts marked for the catalogs and
        the "file, line" frame; texts it does not know stay in English.
        """
        tr = gettext or _identity
        hint_key = "hint" if self.templates["plain_hint"] is None else "plain_hint"
        return self._format(
            self._fill(self.templates["problem"], tr), self._fill(self.templates[hint_key], tr), tr
        )

    def _format(self, problem: str | None, hint: str | None, gettext: Callable[[str], str]) -> str:
        where = ""
        if self.source:
            where = (
                gettext(N_("{source}, line {line}: ")).format(source=self.source, line=self.line)
                if self.line is not None
                else f"{self.source}: "
            )
        elif self.line is not None:
            where = gettext(N_("line {line}: ")).format(line=self.line)
        text = where + (problem or "").rstrip(".")
        if hint:
            text += ". " + hint
        # one line, always: a message may quote user data or a library's multi-line text
        return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text


class InputWarning(UserWarning):
    """Something in the input that RankLab accepted but the user should know about."""
