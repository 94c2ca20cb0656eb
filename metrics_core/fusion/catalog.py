"""The fusion catalogue: every method and normalisation, their parameters and references.

Names follow ranx (Bassani and Romelli 2022, "ranx.fuse and ranx.optimize_fusion", CIKM),
whose catalogue this is; the Comb family also answers to ``combsum``/``comb_sum`` and the
rest of the spellings users type. Each entry states its formula with these symbols:

* ``s_i(d)``: the (normalised) score of document ``d`` in run ``i``; ``r_i(d)``: its rank
  there (1 for the first document); ``n(d)``: the number of runs that retrieved ``d``;
  ``w_i``: the weight of run ``i``; ``N``: the number of candidates of the query (the union
  of the runs' documents); ``L_i``: the length of run ``i``'s list for the query.
* Sums run over the runs that retrieved ``d`` unless said otherwise.
"""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_

#: SegFuse's segment boundaries (ranks 1-5, 6-15, 16-35, ... 2556-5115)
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
#: BayesFuse's segment boundaries
BAYES_CUTOFFS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)

#: method -> (formula, parameters with their defaults (None: required), reference)
METHODS: dict[str, dict] = {
    "combsum": {
        "formula": "sum_i s_i(d)",
        "params": {},
        "family": "score",
        "ref": "Fox and Shaw 1994, Combination of multiple searches (TREC-2)",
    },
    "combmnz": {
        "formula": "n(d) * sum_i s_i(d)",
        "params": {},
        "family": "score",
        "ref": "Fox and Shaw 1994, Combination of multiple searches (TREC-2)",
    },
    "combanz": {
        "formula": "sum_i s_i(d) / n(d)",
        "params": {},
        "family": "score",
        "ref": "Fox and Shaw 1994, Combination of multiple searches (TREC-2)",
    },
    "combmax": {
        "formula": "max_i s_i(d)",
        "params": {},
        "family": "score",
        "ref": "Fox and Shaw 1994, Combination of multiple searches (TREC-2)",
    },
    "combmin": {
        "formula": "min_i s_i(d)",
        "params": {},
        "family": "score",
        "ref": "Fox and Shaw 1994, Combination of multiple searches (TREC-2)",
    },
    "combmed": {
        "formula": "median_i s_i(d)",
        "params": {},
        "family": "score",
        "ref": "Fox and Shaw 1994, Combination of multiple searches (TREC-2)",
    },
    "combgmnz": {
        "formula": "n(d)^gamma * sum_i s_i(d)",
        "params": {"gamma": None},
        "family": "score",
        "ref": "Lee 1997, Analyses of multiple evidence combination (SIGIR)",
    },
    "wsum": {
        "formula": "sum_i w_i s_i(d)",
        "params": {},
        "family": "score",
        "weights": True,
        "ref": "Bassani and Romelli 2022 (ranx); linear combination",
    },
    "wmnz": {
        "formula": "(sum_i w_i) * sum_i s_i(d), both over the runs that retrieved d",
        "params": {},
        "family": "score",
        "weights": True,
        "ref": "Wu and Crestani 2002, Data fusion with estimated weights (CIKM)",
    },
    "mixed": {
        "formula": "sqrt(n(d)) * sum_i w_i s_i(d)",
        "params": {},
        "family": "score",
        "weights": True,
        "ref": "Wu and Crestani 2002, Data fusion with estimated weights (CIKM)",
    },
    "rrf": {
        "formula": "sum_i 1 / (k + r_i(d))",
        "params": {"k": 60},
        "family": "rank",
        "ref": "Cormack, Clarke and Buettcher 2009, Reciprocal rank fusion outperforms "
        "Condorcet and individual rank learning methods (SIGIR)",
    },
    "isr": {
        "formula": "n(d) * sum_i 1 / r_i(d)^2",
        "params": {},
        "family": "rank",
        "ref": "Mourao, Martins and Magalhaes 2014, Multimodal medical information retrieval "
        "with unsupervised rank fusion (CMIG)",
    },
    "log_isr": {
        "formula": "ln(n(d)) * sum_i 1 / r_i(d)^2",
        "params": {},
        "family": "rank",
        "ref": "Mourao, Martins and Magalhaes 2014 (CMIG)",
    },
    "logn_isr": {
        "formula": "ln(n(d) + sigma) * sum_i 1 / r_i(d)^2",
        "params": {"sigma": 0.01},
        "family": "rank",
        "ref": "Mourao, Martins and Magalhaes 2014 (CMIG)",
    },
    "rbc": {
        "formula": "sum_i (1 - phi) phi^(r_i(d) - 1)",
        "params": {"phi": None},
        "family": "rank",
        "ref": "Bailey, Moffat, Scholer and Thomas 2017, Retrieval consistency in the presence "
        "of query variations (SIGIR)",
    },
    "bordafuse": {
        "formula": "sum over all runs of N - r_i(d) + 1, or (N - L_i + 1) / 2 where run i "
        "did not retrieve d",
        "params": {},
        "family": "rank",
        "ref": "Aslam and Montague 2001, Models for metasearch (SIGIR)",
    },
    "w_bordafuse": {
        "formula": "sum over all runs of w_i times the Borda points of bordafuse",
        "params": {},
        "family": "rank",
        "weights": True,
        "ref": "Aslam and Montague 2001, Models for metasearch (SIGIR)",
    },
    "condorcet": {
        "formula": "N - position in the majority order: d before e when at least half "
        "the runs rank d strictly above e (a run with neither votes for e); "
        "the order is a comparison sort by that vote (ranx's; a merge sort of all queries "
        "at once here)",
        "params": {},
        "family": "rank",
        "ref": "Montague and Aslam 2002, Condorcet fusion for improved retrieval (CIKM)",
    },
    "w_condorcet": {
        "formula": "condorcet with each run's vote weighted by w_i",
        "params": {},
        "family": "rank",
        "weights": True,
        "ref": "Montague and Aslam 2002, Condorcet fusion for improved retrieval (CIKM)",
    },
    "mapfuse": {
        "formula": "sum_i MAP_i / r_i(d), MAP_i the run's mean average precision on the "
        "training queries",
        "params": {"map_scores": None},
        "family": "rank",
        "supervised": True,
        "ref": "Lillis, Zhang, Toolan, Collier, Leonard and Dunnion 2010, Estimating "
        "probabilities for effective data fusion (SIGIR)",
    },
    "posfuse": {
        "formula": "sum_i P_i(r_i(d)), P_i(p) the share of training queries whose "
        "document at rank p is relevant",
        "params": {"probs": None},
        "family": "rank",
        "supervised": True,
        "ref": "Lillis et al. 2010, Estimating probabilities for effective data fusion (SIGIR)",
    },
    "probfuse": {
        "formula": "sum_i P_i(k) / k, k the segment of r_i(d) when the list is cut in "
        "n_segments equal segments",
        "params": {"probs": None},
        "family": "rank",
        "supervised": True,
        "train": {"n_segments": 10},
        "ref": "Lillis, Toolan, Collier and Dunnion 2006, ProbFuse: a probabilistic "
        "approach to data fusion (SIGIR)",
    },
    "segfuse": {
        "formula": "sum_i P_i(k) (s_i(d) + 1), k the segment of r_i(d); segments end at "
        "10 * 2^(k-1) - 5",
        "params": {"probs": None},
        "family": "rank",
        "supervised": True,
        "ref": "Shokouhi 2007, Segmentation of search engine results for effective "
        "data-fusion (ECIR)",
    },
    "slidefuse": {
        "formula": "sum_i mean of P_i over ranks r_i(d) - w .. r_i(d) + w (inside the list)",
        "params": {"probs": None, "w": None},
        "family": "rank",
        "supervised": True,
        "ref": "Lillis, Toolan, Collier and Dunnion 2008, Extending probabilistic data "
        "fusion using sliding windows (ECIR)",
    },
    "bayesfuse": {
        "formula": "sum over all runs of the log-odds of relevance at r_i(d), "
        "ln(0.001 / 0.999) where run i did not retrieve d",
        "params": {"log_odds": None},
        "family": "rank",
        "supervised": True,
        "ref": "Aslam and Montague 2001, Models for metasearch (SIGIR)",
    },
}

#: other spellings -> the catalogue's name (ranx's short names among them)
ALIASES = {
    "sum": "combsum",
    "comb_sum": "combsum",
    "mnz": "combmnz",
    "comb_mnz": "combmnz",
    "anz": "combanz",
    "comb_anz": "combanz",
    "max": "combmax",
    "comb_max": "combmax",
    "min": "combmin",
    "comb_min": "combmin",
    "med": "combmed",
    "comb_med": "combmed",
    "gmnz": "combgmnz",
    "comb_gmnz": "combgmnz",
    "weighted_sum": "wsum",
    "weighted_bordafuse": "w_bordafuse",
    "weighted_condorcet": "w_condorcet",
    "borda": "bordafuse",
}

#: normalisation -> formula, per run and query (ranx's; denominators floored at 1e-9)
NORMS: dict[str, str] = {
    "none": "s",
    "min-max": "(s - min) / max(max - min, 1e-9)",
    "min-max-inverted": "(max - s) / max(max - min, 1e-9) (for runs where lower is better)",
    "max": "s / max(max, 1e-9)",
    "sum": "(s - min) / max(sum - L min, 1e-9)",
    "zmuv": "(s - mean) / max(std, 1e-9), std the population standard deviation",
    "rank": "1 - (r - 1) / L",
    "borda": "1 - (r - 1) / N; a candidate the run did not retrieve: 1/2 - (L - 1) / (2 N)",
}
NORM_ALIASES = {
    None: "none",
    "min_max": "min-max",
    "minmax": "min-max",
    "min_max_inverted": "min-max-inverted",
}

#: labels for menus and tables
METHOD_LABELS = {
    "combsum": "CombSUM",
    "combmnz": "CombMNZ",
    "combanz": "CombANZ",
    "combmax": "CombMAX",
    "combmin": "CombMIN",
    "combmed": "CombMED",
    "combgmnz": "CombGMNZ",
    "wsum": "WSUM",
    "wmnz": "WMNZ",
    "mixed": "Mixed",
    "rrf": "RRF",
    "isr": "ISR",
    "log_isr": "log-ISR",
    "logn_isr": "logN-ISR",
    "rbc": "RBC",
    "bordafuse": "BordaFuse",
    "w_bordafuse": N_("Weighted BordaFuse"),
    "condorcet": "Condorcet",
    "w_condorcet": N_("Weighted Condorcet"),
    "mapfuse": "MAPFuse",
    "posfuse": "PosFuse",
    "probfuse": "ProbFuse",
    "segfuse": "SegFuse",
    "slidefuse": "SlideFuse",
    "bayesfuse": "BayesFuse",
}
NORM_LABELS = {
    "none": N_("none"),
    "min-max": N_("min-max"),
    "min-max-inverted": N_("min-max, inverted"),
    "max": N_("max"),
    "sum": N_("sum"),
    "zmuv": N_("zero mean, unit variance"),
    "rank": N_("rank"),
    "borda": N_("Borda"),
}


def method_name(method: str) -> str:
    """The catalogue's name of ``method`` (an alias accepted); InputError when unknown."""
    from metrics_core.errors import InputError

    key = str(method).strip().lower().replace("-", "_")
    key = ALIASES.get(key, key)
    if key not in METHODS:
        raise InputError(
            N_("unknown fusion method {method!r}"),
            hint=N_("accepted: {choices}"),
            field="method",
            option="--method",
            params={"method": method, "choices": ", ".join(METHODS)},
        )
    return key


def norm_name(norm) -> str:
    """The catalogue's name of normalisation ``norm`` (None means "none")."""
    from metrics_core.errors import InputError

    key = NORM_ALIASES.get(norm, norm)
    key = NORM_ALIASES.get(str(key).strip().lower(), str(key).strip().lower())
    if key not in NORMS:
        raise InputError(
            N_("unknown normalisation {norm!r}"),
            hint=N_("accepted: {choices}"),
            field="norm",
            option="--norm",
            params={"norm": norm, "choices": ", ".join(NORMS)},
        )
    return key


__all__ = [
    "METHODS",
    "ALIASES",
    "NORMS",
    "NORM_ALIASES",
    "METHOD_LABELS",
    "NORM_LABELS",
    "method_name",
    "norm_name",
]


#: method -> (LaTeX formula, one translated sentence) for the Learn page and the Fusion page
EXPLAINED: dict[str, tuple[str, str]] = {
    "combsum": (
        r"\sum_{i:\,d \in R_i} s_i(d)",
        N_("Adds the normalised scores the runs give the document."),
    ),
    "combmnz": (
        r"n(d) \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombSUM multiplied by the number of runs that retrieved the document."),
    ),
    "combanz": (
        r"\frac{1}{n(d)} \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombSUM divided by the number of runs that retrieved the document."),
    ),
    "combmax": (
        r"\max_{i:\,d \in R_i} s_i(d)",
        N_("The highest normalised score of the document."),
    ),
    "combmin": (r"\min_{i:\,d \in R_i} s_i(d)", N_("The lowest normalised score of the document.")),
    "combmed": (
        r"\operatorname{median}_{i:\,d \in R_i} s_i(d)",
        N_("The median of the document's normalised scores."),
    ),
    "combgmnz": (
        r"n(d)^{\gamma} \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombMNZ with the number of runs raised to a power gamma."),
    ),
    "wsum": (r"\sum_{i:\,d \in R_i} w_i\, s_i(d)", N_("A weighted sum of the normalised scores.")),
    "wmnz": (
        r"\Big(\sum_{i:\,d \in R_i} w_i\Big) \sum_{i:\,d \in R_i} s_i(d)",
        N_("CombSUM multiplied by the weights of the runs that retrieved the document."),
    ),
    "mixed": (
        r"\sqrt{n(d)} \sum_{i:\,d \in R_i} w_i\, s_i(d)",
        N_(
            "A weighted sum multiplied by the square root of the number of runs that retrieved the document."
        ),
    ),
    "rrf": (
        r"\sum_{i:\,d \in R_i} \frac{1}{k + r_i(d)}",
        N_(
            "Reciprocal rank fusion: each run adds 1 / (k + rank); k = 60 by default. Scores are not used."
        ),
    ),
    "isr": (
        r"n(d) \sum_{i:\,d \in R_i} \frac{1}{r_i(d)^2}",
        N_("Inverse square rank: each run adds 1 / rank squared, times the number of runs."),
    ),
    "log_isr": (
        r"\ln n(d) \sum_{i:\,d \in R_i} \frac{1}{r_i(d)^2}",
        N_(
            "ISR with the logarithm of the number of runs (0 for a document only one run retrieved)."
        ),
    ),
    "logn_isr": (
        r"\ln\big(n(d) + \sigma\big) \sum_{i:\,d \in R_i} \frac{1}{r_i(d)^2}",
        N_("ISR with the logarithm of the number of runs plus sigma."),
    ),
    "rbc": (
        r"\sum_{i:\,d \in R_i} (1 - \phi)\, \phi^{\,r_i(d) - 1}",
        N_(
            "Rank-biased centroid: each run adds a weight that decays geometrically with the rank (persistence phi)."
        ),
    ),
    "bordafuse": (
        r"\sum_i \begin{cases} N - r_i(d) + 1 & d \in R_i \\ (N - L_i + 1)/2 & \text{otherwise} \end{cases}",
        N_(
            "Borda count: each run gives N points to its first document, one less to each next one, "
            "and shares the rest equally among the candidates it did not retrieve."
        ),
    ),
    "w_bordafuse": (
        r"\sum_i w_i\, \mathrm{Borda}_i(d)",
        N_("Borda count with each run's points weighted."),
    ),
    "condorcet": (
        r"N - \mathrm{position\ in\ the\ majority\ order}",
        N_("Condorcet: d comes before e when at least half of the runs rank d above e."),
    ),
    "w_condorcet": (
        r"N - \mathrm{position\ in\ the\ weighted\ majority\ order}",
        N_("Condorcet with each run's vote weighted."),
    ),
    "mapfuse": (
        r"\sum_{i:\,d \in R_i} \frac{\mathrm{MAP}_i}{r_i(d)}",
        N_(
            "Supervised: each run adds its mean average precision on training queries divided by the rank."
        ),
    ),
    "posfuse": (
        r"\sum_{i:\,d \in R_i} P_i\big(r_i(d)\big)",
        N_(
            "Supervised: each run adds the share of training queries whose document at that rank is relevant."
        ),
    ),
    "probfuse": (
        r"\sum_{i:\,d \in R_i} \frac{P_i(k)}{k},\ k = \text{segment of } r_i(d)",
        N_(
            "Supervised: the lists are cut into equal segments; each run adds the probability of relevance "
            "of the document's segment divided by the segment's number."
        ),
    ),
    "segfuse": (
        r"\sum_{i:\,d \in R_i} P_i(k)\,\big(s_i(d) + 1\big)",
        N_(
            "Supervised: segments growing in size (5, 10, 20, ... ranks); the probability of the segment "
            "times the normalised score plus one."
        ),
    ),
    "slidefuse": (
        r"\sum_{i:\,d \in R_i} \frac{1}{b - a + 1} \sum_{p=a}^{b} P_i(p),\ [a, b] = r_i(d) \pm w",
        N_(
            "Supervised: PosFuse's probabilities averaged over a window of ranks around the document."
        ),
    ),
    "bayesfuse": (
        r"\sum_i \log \frac{P_i(\mathrm{rel} \mid r_i(d))}{P_i(\mathrm{nonrel} \mid r_i(d))}",
        N_("Supervised: the log-odds of relevance at the document's rank in each run, summed."),
    ),
}
__all__ += ["EXPLAINED"]
