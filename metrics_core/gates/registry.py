"""The binary-gate metric registry: every detection, calibration and dynamic-K metric,
declared once, and the names that reach them.

Each metric is a :func:`~metrics_core.gates.definition.gate_metric` declaration on a
small compute function that calls the library function (:mod:`metrics_core.detection`,
:mod:`metrics_core.calibration`, :mod:`metrics_core.dynamic_k`); those validate their
input once through :func:`metrics_core.validation.check_binary` and compute after. The
audit specification's edge-case conventions are named options: ``single_class=audit``
(AUROC 0.5, AUPRC = the positive rate with one class only) and ``ECE(strategy=audit)``
(its bins, which leave p = 1.0 out).

>>> gate_score("AUROC", [1, 1, 0, 0, 1], [0.9, 0.7, 0.4, 0.2, 0.8])
1.0
>>> parse_gate_metric("tpr@0.1").name, parse_gate_metric("ece(bins=15)").name
('TPR@FPR=0.1', 'ECE(bins=15)')
"""

from __future__ import annotations

import re

import numpy as np

from metrics_core import calibration as cal
from metrics_core import detection as det
from metrics_core import dynamic_k as dk
from metrics_core.errors import N_, InputError
from metrics_core.gates.definition import (
    GATE_FAMILIES,
    GateExample,
    GateMetric,
    GateParam,
    GateSpec,
    gate_metric,
)
from metrics_core.validation import LIMITS, as_fraction, check_float, check_int

__all__ = ["GATE_METRICS", "audit_ece", "GateMetric", "GateParam", "GateSpec", "GateExample", "parse_gate_metric",
           "gate_score", "accepted_gate_names", "list_gate_metrics"]


def _rate(text: str) -> float:
    frac = as_fraction(text, "target FPR")
    if not 0 <= frac <= 1:
        raise InputError(N_("fpr must be between 0 and 1"))
    return float(frac)


SINGLE_CLASS = GateParam("single_class", "with one class only: NaN and a warning (nan), or the audit "
                         "specification's rule (audit): AUROC 0.5, AUPRC = the positive rate",
                         "nan", choices=det.SINGLE_CLASS_RULES)
FPR = GateParam("fpr", "target false positive rate in [0, 1], read as its decimal spelling", 0.05, parse=_rate)
BINS = GateParam("bins", f"number of bins (1 to {LIMITS['bins']:,})", 10,
                 parse=lambda t: check_int(t, "number of bins", minimum=1, maximum=LIMITS["bins"]))
STRATEGY = GateParam("strategy", "equal-width bins [i/B, (i+1)/B), the last closed (uniform), or equal-mass "
                     "bins at the quantiles (quantile)", "uniform", choices=cal.STRATEGIES)
DK_PARAMS = (
    GateParam("tau", "probability threshold: candidates with probability >= tau", dk.DEFAULTS["tau"],
              parse=lambda t: check_float(t, "tau")),
    GateParam("k_min", "fewest candidates selected per query", dk.DEFAULTS["k_min"],
              parse=lambda t: check_int(t, "k_min", minimum=0, maximum=LIMITS["cutoff"])),
    GateParam("hard_cap", "most candidates selected per query", dk.DEFAULTS["hard_cap"],
              parse=lambda t: check_int(t, "hard_cap", minimum=0, maximum=LIMITS["cutoff"])),
    GateParam("k_max_ratio", "most candidates as a fraction of a query's candidates (floored)",
              dk.DEFAULTS["k_max_ratio"], parse=lambda t: check_float(t, "k_max_ratio", minimum=0)),
    GateParam("conflict", "when k_max < k_min: the upper bound wins (k_max) or the lower (k_min)", "k_max",
              choices=dk.CONFLICT_RULES),
)

_Y, _S = (1, 0, 1, 0, 1, 0), (0.9, 0.8, 0.7, 0.3, 0.3, 0.1)
_P = (0.8, 0.35, 0.6, 0.2, 0.9, 0.45)
_ONE_CLASS = ("One class only: NaN with a SingleClassWarning (single_class=nan, default); "
              "single_class=audit applies the audit specification's rule")


@gate_metric("AUROC", "area under the ROC curve: the probability that a positive outscores a negative",
             family="detection", params=(SINGLE_CLASS,), aliases=("roc_auc", "auc", "auc_roc"),
             formula=r"\frac{1}{2 N_+ N_-}\sum_i (FP_i - FP_{i-1})(TP_i + TP_{i-1})",
             edge_cases=("Tied scores count one half (Mann-Whitney U); any score scale.",
                         _ONE_CLASS + " (0.5, a constant ranking)."),
             reference="Hanley & McNeil (1982), Radiology 143:29-36; Fawcett (2006), Pattern "
                       "Recognition Letters 27:861-874.",
             perfect=1.0, sklearn="roc_auc_score", example=GateExample(_Y, _S, "AUROC", 6.5 / 9))
def auroc(y_true, y_score, query, *, single_class):
    """AUROC (:func:`metrics_core.detection.roc_auc_score`)."""
    return det.roc_auc_score(y_true, y_score, single_class=single_class)


@gate_metric("AUPRC", "area under the precision-recall curve, as step-wise average precision",
             family="detection", params=(SINGLE_CLASS,), aliases=("average_precision", "pr_auc", "auc_pr"),
             formula=r"\sum_n (R_n - R_{n-1}) P_n",
             edge_cases=("No interpolation; one point per distinct score.",
                         _ONE_CLASS + " (the positive rate)."),
             reference="Davis & Goadrich (2006), ICML; Boyd, Eng & Page (2013), ECML PKDD.",
             perfect=1.0, sklearn="average_precision_score",
             example=GateExample(_Y, _S, "AUPRC", 0.7555555555555555))
def auprc(y_true, y_score, query, *, single_class):
    """AUPRC (:func:`metrics_core.detection.average_precision_score`)."""
    return det.average_precision_score(y_true, y_score, single_class=single_class)


@gate_metric("TPR", "true positive rate at a target false positive rate: the highest TPR whose "
             "false positives stay within floor(target x negatives)", family="detection", params=(FPR,),
             at="fpr", aliases=("tpr_at_fpr", "tpr@fpr", "recall_at_fpr"),
             formula=r"\max\{TP_i / N_+ : FP_i \le \lfloor \alpha N_- \rfloor\}",
             edge_cases=("Predict positive when score >= threshold; a block of tied scores is taken "
                         "whole or not at all.",
                         "floor(alpha N_-) is exact (alpha read as its decimal spelling: 0.29 x 100 = 29).",
                         "One class only: NaN with a SingleClassWarning."),
             reference="The audit specification's TPR@FPR (reported at 3%, 5% and 10%); Pepe (2003), "
                       "The Statistical Evaluation of Medical Tests, ch. 4.",
             perfect=1.0, example=GateExample(_Y, _S, "TPR@FPR=0.34", 2 / 3))
def tpr(y_true, y_score, query, *, fpr):
    """TPR at a target FPR (:func:`metrics_core.detection.tpr_at_fpr`)."""
    return det.tpr_at_fpr(y_true, y_score, fpr)["tpr"]


ECE_STRATEGY = GateParam("strategy", STRATEGY.description + ", or the audit specification's bins (audit): "
                         "edges numpy.linspace(0, 1, B + 1), every bin half-open, so p = 1.0 is in no bin "
                         "but counts in N", "uniform", choices=(*cal.STRATEGIES, "audit"))


def audit_ece(y_true, y_prob, n_bins: int = 10) -> float:
    r"""ECE with the audit specification's bins: edges ``numpy.linspace(0, 1, B + 1)``,
    bin m holding ``edges[m] <= p < edges[m+1]`` (so p = 1.0 falls in no bin), weights
    ``|B_m| / N`` over all N items, accumulated bin by bin in order.

    .. math:: \sum_m \frac{|B_m|}{N}\,|\bar y_{B_m} - \bar p_{B_m}|

    >>> audit_ece([0, 1, 1], [0.25, 0.75, 1.0], 2)   # p = 1.0 is left out of the bins
    0.16666666666666666
    """
    labels, probs = cal.check_probabilities(y_true, y_prob)
    n_bins = cal.check_bins(n_bins, "uniform")
    edges = np.linspace(0, 1, n_bins + 1)
    idx = np.searchsorted(edges, probs, side="right") - 1
    order = np.argsort(idx, kind="stable")  # each bin's items stay in input order
    idx, y, p = idx[order], labels[order].astype(np.float64), probs[order]
    bounds = np.searchsorted(idx, np.arange(n_bins + 1))
    ece = 0.0
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b > a:
            ece += (b - a) / probs.size * abs(y[a:b].mean() - p[a:b].mean())
    return float(ece)


@gate_metric("ECE", "expected calibration error: count-weighted gap between accuracy and confidence per bin",
             family="calibration", params=(BINS, ECE_STRATEGY), aliases=("expected_calibration_error",),
             formula=r"\sum_m \frac{|B_m|}{N}\,|\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|",
             edge_cases=("Empty bins contribute nothing; bins are [a, b) with the last closed, so p = 1.0 "
                         "counts; strategy=audit keeps the audit specification's bins, which leave "
                         "p = 1.0 out of every bin (still counted in N).",
                         "Probabilities outside [0, 1] are an error, never squashed."),
             reference="Naeini, Cooper & Hauskrecht (2015), AAAI; Guo et al. (2017), ICML.",
             better="lower", perfect=0.0, probabilities=True, example=GateExample(_Y, _P, "ECE(bins=2)", 0.2833333333333334))
def ece(y_true, y_score, query, *, bins, strategy):
    """Plug-in ECE (:func:`metrics_core.calibration.expected_calibration_error`; with
    ``strategy=audit``, :func:`audit_ece`)."""
    if strategy == "audit":
        return audit_ece(y_true, y_score, bins)
    return cal.expected_calibration_error(y_true, y_score, bins, strategy)


@gate_metric("dECE", "debiased expected calibration error: the plug-in ECE minus each bin's sampling bias",
             family="calibration", params=(BINS, STRATEGY), aliases=("ece_debiased", "debiased_ece"),
             formula=r"\sum_m \frac{|B_m|}{N}\big(2|\hat g_m| - \mathbb{E}|N(\hat g_m, s_m^2)|\big)",
             edge_cases=("An estimate of a non-negative quantity: it may come out slightly below 0 "
                         "(never below -0.4, the bound of 2|g| - E|Z| for a bin's label mean).",
                         "A bin whose labels are all equal contributes its plug-in gap."),
             reference="Kumar, Liang & Ma (2019), NeurIPS; Roelofs et al. (2022), AISTATS.",
             value_range=(-0.4, 1.0), better="lower", perfect=0.0, probabilities=True,
             example=GateExample(_Y, _P, "dECE(bins=1)", -0.06772924476022307))
def ece_debiased(y_true, y_score, query, *, bins, strategy):
    """Debiased ECE (:func:`metrics_core.calibration.debiased_expected_calibration_error`)."""
    return cal.debiased_expected_calibration_error(y_true, y_score, bins, strategy)


@gate_metric("MCE", "maximum calibration error: the largest gap between accuracy and confidence of a bin",
             family="calibration", params=(BINS, STRATEGY), aliases=("maximum_calibration_error",),
             formula=r"\max_{m: |B_m| > 0} |\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|",
             edge_cases=("Empty bins are left out.", "Probabilities outside [0, 1] are an error."),
             reference="Naeini, Cooper & Hauskrecht (2015), AAAI.",
             better="lower", perfect=0.0, probabilities=True, example=GateExample(_Y, _P, "MCE(bins=2)", 1 / 3))
def mce(y_true, y_score, query, *, bins, strategy):
    """MCE (:func:`metrics_core.calibration.maximum_calibration_error`)."""
    return cal.maximum_calibration_error(y_true, y_score, bins, strategy)


@gate_metric("Brier", "Brier score: mean squared difference between probability and label",
             family="calibration", aliases=("brier_score", "brier_score_loss"),
             formula=r"\frac{1}{N}\sum_i (p_i - y_i)^2",
             edge_cases=("Probabilities outside [0, 1] are an error.",),
             reference="Brier (1950), Monthly Weather Review 78:1-3.",
             better="lower", perfect=0.0, probabilities=True, sklearn="brier_score_loss",
             example=GateExample(_Y, _P, "Brier", 0.09583333333333334))
def brier(y_true, y_score, query):
    """Brier score (:func:`metrics_core.calibration.brier_score`)."""
    return cal.brier_score(y_true, y_score)


_DK_EDGES = ("Per query K = min(max(#{p >= tau}, k_min), k_max, n) with k_max = min(hard_cap, "
             "floor(n k_max_ratio)); conflict=k_min lets k_min win over k_max.",
             "Equal probabilities at the cut are taken in input order.")
_DK_REF = "The audit specification's dynamic-K metrics (evidence recall, evidence precision, average K)."
_Q = ("a", "a", "a", "b", "b", "b")


def _dk(y_true, y_score, query, params) -> dict:
    if query is None:
        raise InputError(N_("dynamic K needs the query of each row"), hint=N_("pass query=[...]"),
                         plain_hint=N_("give the query of each row"))
    table = dk.prepare(query, y_score, y_true)
    return dk.dynamic_k_scores(table, params["tau"], params["k_min"], params["hard_cap"],
                               params["k_max_ratio"], conflict=params["conflict"])


@gate_metric("EvidenceRecall", "mean over queries of the share of gold candidates selected",
             family="dynamic_k", params=DK_PARAMS, aliases=("evidence_recall", "dk_recall"),
             formula=r"\frac{1}{N}\sum_i \frac{|S_i \cap G_i|}{|G_i|}",
             edge_cases=("A query without gold scores 1 when nothing is selected, else 0.", *_DK_EDGES),
             reference=_DK_REF, probabilities=True, needs_query=True, input_order_ties=True,
             example=GateExample(_Y, _P, "EvidenceRecall(tau=0.4,k_min=1,k_max_ratio=1)", 1.0, _Q))
def evidence_recall(y_true, y_score, query, **params):
    """Evidence recall (:func:`metrics_core.dynamic_k.dynamic_k_scores`)."""
    return _dk(y_true, y_score, query, params)["recall"]


@gate_metric("EvidencePrecision", "mean over queries of the share of selected candidates that are gold",
             family="dynamic_k", params=DK_PARAMS, aliases=("evidence_precision", "dk_precision"),
             formula=r"\frac{1}{N}\sum_i \frac{|S_i \cap G_i|}{|S_i|}",
             edge_cases=("A query with nothing selected scores 1 when it has no gold, else 0.", *_DK_EDGES),
             reference=_DK_REF, probabilities=True, needs_query=True, input_order_ties=True,
             example=GateExample(_Y, _P, "EvidencePrecision(tau=0.4,k_min=1,k_max_ratio=1)", 0.75, _Q))
def evidence_precision(y_true, y_score, query, **params):
    """Evidence precision (:func:`metrics_core.dynamic_k.dynamic_k_scores`)."""
    return _dk(y_true, y_score, query, params)["precision"]


@gate_metric("AvgK", "mean number of candidates selected per query (a cost: read it next to recall)",
             family="dynamic_k", params=DK_PARAMS, aliases=("avg_k", "average_k"),
             formula=r"\frac{1}{N}\sum_i |S_i|",
             edge_cases=("Lower is cheaper at equal evidence recall; bounded by hard_cap.", *_DK_EDGES),
             reference=_DK_REF, value_range=(0.0, None), better="lower", probabilities=True,
             needs_query=True, input_order_ties=True,
             example=GateExample(_Y, _P, "AvgK(tau=0.4,k_min=1,k_max_ratio=1)", 2.0, _Q))
def avg_k(y_true, y_score, query, **params):
    """Average K (:func:`metrics_core.dynamic_k.dynamic_k_scores`)."""
    return _dk(y_true, y_score, query, params)["avg_k"]


#: metric name -> declaration, in declaration order
GATE_METRICS: dict[str, GateMetric] = {m.name: m for m in GATE_FAMILIES}
_NAMES: dict[str, str] = {a.lower(): m.name for m in GATE_FAMILIES for a in (m.name, *m.aliases)}
_NAME_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*(?:@\s*([^@()\s]+))?\s*$")


def accepted_gate_names() -> str:
    """The accepted names and their parameters, in one line (for messages)."""
    return "; ".join(m.name + (f"@{m.at.upper()}=value" if m.at else "")
                     + (f" ({', '.join(p.name for p in m.params if p.name != m.at)})"
                        if any(p.name != m.at for p in m.params) else "") for m in GATE_FAMILIES)


def list_gate_metrics() -> list[tuple[str, str]]:
    """(name, description) of every gate metric."""
    return [(m.name, m.description) for m in GATE_FAMILIES]


def _read(raw: str, m: GateMetric, key: str, value: str):
    names = [p.name for p in m.params]
    if key not in names:
        raise InputError(N_("gate metric {metric!r}: unknown parameter {key!r}"),
                         hint=N_("{name} accepts: {names}") if names else N_("{name} accepts: no parameters"),
                         params={"metric": raw, "key": key, "name": m.name, "names": ", ".join(names)})
    param = m.param(key)
    problem = N_("gate metric {metric!r}: {parameter}={text!r} is not accepted")
    where = {"metric": raw, "parameter": key, "text": value}
    if param.choices is not None and value not in param.choices:
        raise InputError(problem, hint=N_("{parameter} accepts {choices}"),
                         params={**where, "choices": ", ".join(param.choices)})
    try:
        return param.read(value)
    except InputError as exc:
        raise InputError(problem, **reason_hint(exc, where)) from None
    except ValueError as exc:
        raise InputError(problem, hint=N_("{parameter} {reason}"), params={**where, "reason": exc}) from None


def reason_hint(exc: InputError, params: dict) -> dict:
    """``hint`` and ``params`` that give ``exc``'s problem as the hint of a new error whose
    texts use ``params``: the problem's template and values where they do not clash with
    ``params`` (so that it is translated), else its English text as a value.

    >>> reason_hint(InputError(N_("got {n}"), params={"n": 3}), {"metric": "ECE"})
    {'hint': 'got {n}', 'params': {'metric': 'ECE', 'n': 3}}
    >>> reason_hint(InputError("a {literal}"), {"metric": "ECE"})
    {'hint': '{reason}', 'params': {'metric': 'ECE', 'reason': 'a {literal}'}}
    """
    template = exc.templates["problem"]
    if exc.params and not set(exc.params) & set(params):
        return {"hint": template, "params": {**params, **exc.params}}
    if not exc.params and "{" not in template and "}" not in template:
        return {"hint": template, "params": params}
    return {"hint": N_("{reason}"), "params": {**params, "reason": exc.problem}}


def parse_gate_metric(text) -> GateSpec:
    """Parse a gate metric name (see :mod:`metrics_core.gates.definition` for the syntax).

    >>> parse_gate_metric("AUROC(single_class=audit)").name, parse_gate_metric("TPR").name
    ('AUROC(single_class=audit)', 'TPR@FPR=0.05')
    """
    if isinstance(text, GateSpec):
        return text
    raw = str(text)
    match = _NAME_RE.match(raw)
    name = _NAMES.get(match.group(1).lower()) if match else None
    if name is None:
        raise InputError(N_("unknown gate metric {metric!r}"), hint=N_("accepted: {choices}"),
                         params={"metric": raw, "choices": accepted_gate_names()})
    m = GATE_METRICS[name]
    params: dict = {}
    pieces = [p for p in (match.group(2) or "").split(",") if p.strip()]
    if match.group(3) is not None:
        if m.at is None:
            raise InputError(N_("gate metric {metric!r}: {name} takes nothing after @"), hint=N_("write {name}"),
                             params={"metric": raw, "name": m.name})
        key, sep, value = match.group(3).rpartition("=")
        if sep and key.lower() != m.at:
            raise InputError(N_("gate metric {metric!r}: {name}@ takes {at}=value"),
                             hint=N_("e.g. {name}@{at}=0.05"),
                             params={"metric": raw, "name": m.name, "at": m.at.upper()})
        pieces.append(f"{m.at}={value}")
    for piece in pieces:
        key, sep, value = piece.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise InputError(N_("gate metric {metric!r}: parameter {key!r} is not key=value"),
                             params={"metric": raw, "key": key})
        if key in params:
            raise InputError(N_("gate metric {metric!r}: parameter {key!r} is given twice"),
                             hint=N_("Give it once"), params={"metric": raw, "key": key})
        params[key] = _read(raw, m, key, value)
    return GateSpec(m, tuple((p.name, params[p.name]) for p in m.params if p.name in params))


def gate_score(metric, y_true, y_score, *, query=None) -> float:
    """The value of the gate metric ``metric`` (a name or a :class:`GateSpec`).

    Parameters
    ----------
    metric : str or GateSpec
        e.g. ``"AUROC"``, ``"TPR@FPR=0.05"``, ``"ECE(bins=15)"``, ``"EvidenceRecall(tau=0.4)"``.
    y_true : array-like of {0, 1}
        Labels (booleans, 0/1 numbers, yes/no words); for dynamic K whether each
        candidate is gold.
    y_score : array-like of float
        Scores (any finite scale) or, for calibration and dynamic K, probabilities in [0, 1].
    query : array-like, optional
        The query of each row; required by the dynamic-K metrics.

    Returns
    -------
    float

    Examples
    --------
    >>> gate_score("Brier", [0, 1], [0.25, 0.5])
    0.15625
    """
    spec = parse_gate_metric(metric)
    return float(spec.metric.compute(y_true, y_score, query, **spec.kwargs()))
