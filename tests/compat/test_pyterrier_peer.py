"""Significance families against the real PyTerrier (optional: installed by hand, the test
skips without it): ``pt.Experiment(..., baseline=0, correction="holm")`` corrects each
measure's p-values apart, which is RankLab's ``family="per_measure"``. Its means come from
ir_measures' pytrec_eval provider (trec_eval 9), its tests are scipy's paired t-test."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pt = pytest.importorskip("pyterrier")

import metrics_core as mc  # noqa: E402
from metrics_core.stats.comparison import compare_runs  # noqa: E402

MEASURES = {"map": "AP", "ndcg_cut_10": "nDCG@10", "P_5": "P@5"}


def frames(seed: int, n_queries: int = 30, n_runs: int = 4):
    rng = np.random.default_rng(seed)
    qrels, runs = [], [[] for _ in range(n_runs)]
    for q in range(n_queries):
        for d in range(40):
            if rng.random() < 0.5:
                qrels.append((f"q{q}", f"d{d}", int(rng.integers(0, 3))))
        for r in range(n_runs):
            for d in rng.choice(40, 30, replace=False):
                # whole numbers: many ties, ordered by trec_eval's rule on both sides
                runs[r].append((f"q{q}", f"d{d}", float(rng.integers(0, 10 + 3 * r))))
    qrels_df = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    run_dfs = [pd.DataFrame(x, columns=["qid", "docno", "score"]) for x in runs]
    topics = pd.DataFrame({"qid": [f"q{q}" for q in range(n_queries)], "query": "x"})
    return qrels_df, run_dfs, topics


@pytest.mark.parametrize("seed", range(3))
def test_per_measure_family_equals_pyterrier_experiment(seed):
    qrels_df, run_dfs, topics = frames(seed)
    names = [f"r{i}" for i in range(len(run_dfs))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = pt.Experiment(
            run_dfs,
            topics,
            qrels_df,
            eval_metrics=list(MEASURES),
            names=names,
            baseline=0,
            correction="holm",
        ).set_index("name")
    qrels = mc.read_qrels(
        qrels_df.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    )
    evaluations = [
        mc.evaluate(
            qrels,
            mc.read_run(df.rename(columns={"qid": "query_id", "docno": "doc_id"})),
            list(MEASURES.values()),
            compat="trec_eval9",
            name=name,
        )
        for name, df in zip(names, run_dfs, strict=True)
    ]
    ours = compare_runs(
        evaluations, "r0", tests=("t",), interval=False, n_permutations=10, family="per_measure"
    )
    for pt_name, name in MEASURES.items():
        for ev in evaluations:
            assert ev.aggregate[name] == pytest.approx(theirs.loc[ev.run_name, pt_name], abs=1e-12)
        rows = ours[ours["measure"] == name].set_index("run")
        for run in names[1:]:
            np.testing.assert_allclose(
                rows.loc[run, "p_t"], theirs.loc[run, f"{pt_name} p-value"], rtol=1e-9
            )
            np.testing.assert_allclose(
                rows.loc[run, "p_corrected_t"],
                theirs.loc[run, f"{pt_name} p-value corrected"],
                rtol=1e-9,
            )
