"""trec_eval's measure table: names, printing kinds, default parameters, nicknames.

Facts from the trec_eval 10.0 and 9.0.8 sources (``measures.c``, ``meas_init.c`` and each
``m_*.c``), written down as data: the order in which trec_eval computes and prints its
measures, how each prints (a count, a value, one value per cutoff, a value named after its
parameter string), the default cutoffs and parameters, and the nicknames ``official``,
``set`` and ``all_trec``. :func:`requested` turns ``-m`` arguments into the list of
:class:`Requested` measures trec_eval would print, each with the RankLab measure names
behind its printed names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "TrecMeasure",
    "Requested",
    "TREC_MEASURES",
    "NICKNAMES",
    "TrecEvalExit",
    "requested",
    "c_atol",
    "c_atof",
]


class TrecEvalExit(Exception):
    """trec_eval stops: ``status`` is its exit status, ``message`` its one line on stderr."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure.

    ``kind``: ``long`` (a count, ``%ld``), ``double`` (``%6.4f``), ``cut_long`` / ``cut_double``
    (one value per cutoff, named ``name_k`` / ``name_%3.2f``), ``param_double`` /
    ``param_pair`` (one value, named ``name_<parameters as written>`` when parameters are
    given), ``runid``, ``relstring``. ``summary_only``: printed for ``all`` only.
    ``ranklab``: the RankLab measure name (no parameters), or None where the measure is
    built from its parameters. ``versions``: the trec_eval versions that have it.
    """

    name: str
    kind: str
    ranklab: str | None = None
    defaults: tuple = ()
    summary_only: bool = False
    versions: tuple = (9, 10)


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: trec_eval's measures in its computing and printing order (those RankLab serves, and
#: those it refuses by name: ``ranklab`` is ``"-"``)
TREC_MEASURES: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "runid"),
    TrecMeasure("num_q", "long", "NumQ", summary_only=True),
    TrecMeasure("num_ret", "long", "NumRet"),
    TrecMeasure("num_rel", "long", "NumRel"),
    TrecMeasure("num_rel_ret", "long", "NumRelRet"),
    TrecMeasure("map", "double", "AP"),
    TrecMeasure("gm_map", "double", "GMAP", summary_only=True),
    TrecMeasure("Rprec", "double", "Rprec"),
    TrecMeasure("bpref", "double", "Bpref"),
    TrecMeasure("recip_rank", "double", "RR"),
    TrecMeasure("iprec_at_recall", "cut_double", "IPrec", _LEVELS),
    TrecMeasure("P", "cut_long", "P", _CUTS),
    TrecMeasure("relstring", "relstring", None, (10.0,)),
    TrecMeasure("recall", "cut_long", "R", _CUTS),
    TrecMeasure("infAP", "double", "infAP"),
    TrecMeasure("gm_bpref", "double", "GMBpref", summary_only=True),
    TrecMeasure(
        "Rprec_mult", "cut_double", "RprecMult", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
    ),
    TrecMeasure("utility", "param_double", "Utility", (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("11pt_avg", "param_double", "IPrecAvg", _LEVELS),
    TrecMeasure("binG", "double", "BinG"),
    TrecMeasure("G", "param_pair", "G"),
    TrecMeasure("dcg", "param_pair", "DCG", versions=(10,)),
    TrecMeasure("ideal_dcg", "param_pair", "-", versions=(10,)),
    TrecMeasure("ndcg", "param_pair", "nDCG"),
    TrecMeasure("ndcg_rel", "param_pair", "nDCGRel"),
    TrecMeasure("Rndcg", "param_pair", "RnDCG"),
    TrecMeasure("ndcg_cut", "cut_long", "nDCG", _CUTS),
    TrecMeasure("map_cut", "cut_long", "AP", _CUTS),
    TrecMeasure("relative_P", "cut_long", "RelP", _CUTS),
    TrecMeasure("success", "cut_long", "Success", (1, 5, 10)),
    TrecMeasure("set_P", "double", "P"),
    TrecMeasure("set_relative_P", "double", "SetRelP"),
    TrecMeasure("set_recall", "double", "R"),
    TrecMeasure("set_map", "double", "SetAP"),
    TrecMeasure("set_F", "param_double", "SetF", (1.0,)),
    TrecMeasure("num_nonrel_judged_ret", "long", "NumNonRelJudgedRet"),
    *(
        TrecMeasure(n, "double", "-")
        for n in (
            "prefs_num_prefs_poss",
            "prefs_num_prefs_ful",
            "prefs_num_prefs_ful_ret",
            "prefs_simp",
            "prefs_pair",
            "prefs_avgjg",
            "prefs_avgjg_Rnonrel",
            "prefs_simp_ret",
            "prefs_pair_ret",
            "prefs_avgjg_ret",
            "prefs_avgjg_Rnonrel_ret",
            "prefs_simp_imp",
            "prefs_pair_imp",
            "prefs_avgjg_imp",
            "map_avgjg",
            "P_avgjg",
            "Rprec_mult_avgjg",
            "yaap",
        )
    ),
    TrecMeasure("rbp", "param_pair", "RBP", versions=(10,)),
    TrecMeasure("rbp_resid", "param_pair", "RBPResid", versions=(10,)),
    TrecMeasure("unj", "cut_long", "Unjudged", (5, 10, 20), versions=(10,)),
)
_BY_NAME = {m.name: m for m in TREC_MEASURES}

_OFFICIAL = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
#: all_trec beyond the official measures, in trec_eval 9's order (10 adds unj, rbp and
#: rbp_resid after recall)
_ALL_TREC_9 = (
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "utility",
    "11pt_avg",
    "ndcg",
    "relative_P",
    "Rprec_mult",
    "success",
    "map_cut",
    "ndcg_cut",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
)
#: nickname -> measure names, per trec_eval version
NICKNAMES: dict[str, dict[int, tuple[str, ...]]] = {
    "official": {9: _OFFICIAL, 10: _OFFICIAL},
    "set": {
        v: (
            "runid",
            "num_q",
            "num_ret",
            "num_rel",
            "num_rel_ret",
            "utility",
            "set_P",
            "set_recall",
            "set_relative_P",
            "set_map",
            "set_F",
        )
        for v in (9, 10)
    },
    "all_trec": {
        10: _OFFICIAL + _ALL_TREC_9[:2] + ("unj", "rbp", "rbp_resid") + _ALL_TREC_9[2:],
        9: _OFFICIAL + _ALL_TREC_9,
    },
}
_REFUSED_NICKNAMES = ("all_prefs", "prefs", "qrels_jg")


def c_atol(text: str) -> int:
    """C's ``atol``: the leading whole number of ``text`` (0 when there is none).

    >>> c_atol("23.4"), c_atol(" 7x"), c_atol("abc")
    (23, 7, 0)
    """
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


def c_atof(text: str) -> float:
    """C's ``atof`` for decimal numbers: the leading number of ``text`` (0.0 when none).

    >>> c_atof(".25"), c_atof("5.0x"), c_atof("")
    (0.25, 5.0, 0.0)
    """
    m = re.match(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", text)
    return float(m.group(1)) if m else 0.0


@dataclass(frozen=True)
class Requested:
    """A measure trec_eval prints: its definition, its printed names (in order) and the
    RankLab measure behind each (``None`` for runid/relstring); ``params`` are the values
    used (cutoffs, parameters, the relstring length)."""

    measure: TrecMeasure
    printed: tuple[str, ...]
    ranklab: tuple
    params: tuple = ()


def _mark(names: list[str], args: dict[str, str], arg: str, version: int) -> None:
    name, dot, params = arg.partition(".")
    if dot:
        if not params:
            raise TrecEvalExit(
                1, f"trec_eval: illegal measure '{name}' (a '.' with no parameters after it)"
            )
        args.setdefault(name, params)  # trec_eval uses the first parameters given for a name
    if name in _REFUSED_NICKNAMES:
        raise TrecEvalExit(
            1,
            f"trec_eval: measure set '{name}' needs preference or jg qrels, which RankLab "
            "does not read; use the ordinary qrels measures",
        )
    if name in NICKNAMES:
        names.extend(NICKNAMES[name][version])
        return
    m = _BY_NAME.get(name)
    if m is None or version not in m.versions:
        raise TrecEvalExit(1, f"trec_eval: illegal measure '{arg}'")
    if m.ranklab == "-":
        raise TrecEvalExit(
            1,
            f"trec_eval: measure '{name}' is not served by RankLab (preference, jg or "
            "experimental measure); leave it out",
        )
    names.append(name)


def _cutoffs(m: TrecMeasure, text: str | None) -> tuple:
    if text is None:
        return m.defaults
    read = c_atol if m.kind == "cut_long" else c_atof
    values = sorted(read(p) for p in text.split(","))
    if m.kind == "cut_long" and values[0] <= 0:
        raise TrecEvalExit(
            2, f"trec_eval: Negative cutoff detected; cannot initialize measure '{m.name}'"
        )
    if len(set(values)) != len(values):
        raise TrecEvalExit(
            2, f"trec_eval: duplicate cutoffs detected; cannot initialize measure '{m.name}'"
        )
    return tuple(values)


def _fmt(v: float) -> str:
    return repr(float(v))


def _pairs(m: TrecMeasure, text: str) -> list[tuple[str, float]]:
    out = []
    for item in text.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise TrecEvalExit(
                2,
                f"trec_eval: malformed pair parameters in '{text}'; cannot initialize "
                f"measure '{m.name}'",
            )
        out.append((key, c_atof(value)))
    return out


def _param_names(m: TrecMeasure, text: str | None) -> str | None:
    """The RankLab measure of a one-value measure given its parameter string (None for a
    measure without a RankLab name, ``relstring``)."""
    base = m.ranklab
    if text is None:
        return base
    if m.kind == "param_double":
        values = [c_atof(p) for p in text.split(",")]
        if m.name == "utility":
            if len(values) != 4:
                raise TrecEvalExit(
                    2,
                    "trec_eval: utility takes 4 parameters (a,b,c,d); cannot initialize "
                    "measure 'utility'",
                )
            return (
                "Utility("
                + ",".join(f"{k}={_fmt(v)}" for k, v in zip("abcd", values, strict=True))
                + ")"
            )
        if m.name == "set_F":
            return f"SetF(beta={_fmt(values[0])})"
        raise AssertionError(m.name)  # 11pt_avg is handled by the caller
    pairs = _pairs(m, text)
    if m.name in ("rbp", "rbp_resid"):
        if [k for k, _ in pairs] != ["p"]:
            raise TrecEvalExit(
                2,
                f"trec_eval: RankLab serves {m.name} with the parameter p only "
                f"(e.g. {m.name}.p=0.95)",
            )
        return f"{base}(p={_fmt(pairs[0][1])})"
    if m.name in ("ndcg", "dcg"):
        gains = []
        for key, value in pairs:
            if not re.fullmatch(r"[+-]?\d+", key.strip()):
                raise TrecEvalExit(
                    2,
                    f"trec_eval: {m.name} gains are written level=gain (e.g. "
                    f"{m.name}.1=3,2=9); got '{key}'",
                )
            gains.append(f"{int(key)}:{_fmt(value)}")
        return f"{base}(gains={','.join(gains)})"
    raise TrecEvalExit(
        2, f"trec_eval: RankLab serves {m.name} without parameters; leave out '.{text}'"
    )


def requested(measure_args: list[str], version: int = 10) -> list[Requested]:
    """The measures trec_eval prints for these ``-m`` arguments, in its printing order.

    >>> [r.printed for r in requested(["P.10,5", "map"])]
    [('map',), ('P_5', 'P_10')]
    >>> [r.ranklab for r in requested(["ndcg.1=3,2=9", "recall.100"])]
    [('R@100',), ('nDCG(gains=1:3.0,2:9.0)',)]
    """
    names: list[str] = []
    args: dict[str, str] = {}
    for arg in measure_args or ["official"]:
        _mark(names, args, arg, version)
    marked = set(names)
    out = []
    for m in TREC_MEASURES:
        if m.name not in marked:
            continue
        text = args.get(m.name)
        if m.kind == "runid":
            out.append(Requested(m, ("runid",), (None,)))
        elif m.kind == "relstring":
            n = int(c_atof(text.split(",")[0])) if text is not None else 10
            out.append(
                Requested(
                    m, (f"relstring_{text}" if text is not None else "relstring",), (None,), (n,)
                )
            )
        elif m.kind in ("cut_long", "cut_double"):
            cuts = _cutoffs(m, text)
            if m.kind == "cut_long":
                printed = tuple(f"{m.name}_{k}" for k in cuts)
                names_ = tuple(f"{m.ranklab}@{k}" for k in cuts)
            else:
                printed = tuple(f"{m.name}_{k:3.2f}" for k in cuts)
                names_ = tuple(
                    f"IPrec@{_fmt(k)}" if m.ranklab == "IPrec" else f"RprecMult(x={_fmt(k)})"
                    for k in cuts
                )
            out.append(Requested(m, printed, names_, cuts))
        elif m.name == "11pt_avg" and text is not None:
            levels = tuple(c_atof(p) for p in text.split(","))
            out.append(
                Requested(
                    m, (f"11pt_avg_{text}",), tuple(f"IPrec@{_fmt(r)}" for r in levels), levels
                )
            )
        else:
            shown = (
                f"{m.name}_{text}" if text is not None and m.kind.startswith("param") else m.name
            )
            out.append(Requested(m, (shown,), (_param_names(m, text),)))
    return out
