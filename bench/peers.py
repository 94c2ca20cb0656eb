"""Evaluate one TREC run with one peer tool, as a user of that tool would.

Run as its own process by ``bench_ranking.py`` so that the whole process is timed
(interpreter start, imports, reading both files, computing, writing the result)::

    python bench/peers.py pytrec_eval --qrels Q --run R --out result.json

Tools: ``pytrec_eval``, ``ranx``, ``ir_measures`` and ``ranklab_lib`` (RankLab through
its Python API, to split reading from computing; the benchmark's RankLab row uses the
command line instead). Each reads the files with the tool's own documented reader and
writes ``{"tool", "version", "aggregate": {measure: mean}, "phases": {...}}`` where
the measures carry RankLab's (ir_measures') names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

#: The benchmark's measures, in RankLab / ir_measures syntax.
MEASURES = ["P@5", "P@10", "R@100", "RR@10", "AP", "nDCG@10", "nDCG@100"]

PYTREC_NAMES = {
    "P@5": "P_5",
    "P@10": "P_10",
    "R@100": "recall_100",
    "AP": "map",
    "nDCG@10": "ndcg_cut_10",
    "nDCG@100": "ndcg_cut_100",
    # RR@10 has no trec_eval measure: derived from recip_rank below.
}

RANX_NAMES = {
    "P@5": "precision@5",
    "P@10": "precision@10",
    "R@100": "recall@100",
    "RR@10": "mrr@10",
    "AP": "map",
    "nDCG@10": "ndcg@10",  # ranx "ndcg" is Jarvelin's linear gain, as trec_eval
    "nDCG@100": "ndcg@100",
}


def run_pytrec_eval(qrels_path: str, run_path: str) -> tuple[dict, dict, int]:
    import pytrec_eval

    t0 = time.perf_counter()
    with open(qrels_path) as f:
        qrel = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    t1 = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrel, {"P.5,10", "recall.100", "recip_rank", "map", "ndcg_cut.10,100"}
    )
    per_query = evaluator.evaluate(run)
    t2 = time.perf_counter()
    n = len(per_query)
    means = {m: sum(v[name] for v in per_query.values()) / n for m, name in PYTREC_NAMES.items()}
    # RR@10 = 1/rank of the first relevant document if that rank is <= 10, else 0;
    # recip_rank >= 1/10 exactly when the first relevant rank is <= 10.
    means["RR@10"] = (
        sum(v["recip_rank"] if v["recip_rank"] >= 0.1 else 0.0 for v in per_query.values()) / n
    )
    t3 = time.perf_counter()
    return means, {"read": t1 - t0, "evaluate": t2 - t1, "mean": t3 - t2}, n


def run_ranx(qrels_path: str, run_path: str) -> tuple[dict, dict, int]:
    from ranx import Qrels, Run, evaluate

    t0 = time.perf_counter()
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    t1 = time.perf_counter()
    scores = evaluate(qrels, run, list(RANX_NAMES.values()), save_results_in_run=False)
    t2 = time.perf_counter()
    means = {m: float(scores[name]) for m, name in RANX_NAMES.items()}
    return means, {"read": t1 - t0, "evaluate": t2 - t1}, len(run)


def run_ir_measures(qrels_path: str, run_path: str) -> tuple[dict, dict, int]:
    import ir_measures

    t0 = time.perf_counter()
    # The readers are lazy iterators; calc_aggregate consumes them, so reading and
    # evaluating cannot be separated without materialising lists (which users don't).
    qrels = ir_measures.read_trec_qrels(qrels_path)
    run = ir_measures.read_trec_run(run_path)
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    result = ir_measures.calc_aggregate(measures, qrels, run)
    t1 = time.perf_counter()
    means = {str(m): float(v) for m, v in result.items()}
    return means, {"read+evaluate": t1 - t0}, -1


def run_ranklab_lib(qrels_path: str, run_path: str) -> tuple[dict, dict, int]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the worktree
    import metrics_core as mc

    t0 = time.perf_counter()
    qrels = mc.read_qrels(qrels_path)
    t1 = time.perf_counter()
    run = mc.read_run(run_path)
    t2 = time.perf_counter()
    ev = mc.evaluate(qrels, run, measures=MEASURES)
    t3 = time.perf_counter()
    phases = {"read_qrels": t1 - t0, "read_run": t2 - t1, "evaluate": t3 - t2}
    return dict(ev.aggregate), phases, int(ev.diagnostics.get("num_queries", -1))


TOOLS = {
    "pytrec_eval": (run_pytrec_eval, "pytrec-eval-terrier"),
    "ranx": (run_ranx, "ranx"),
    "ir_measures": (run_ir_measures, "ir-measures"),
    "ranklab_lib": (run_ranklab_lib, "ranklab"),
}


def main(argv=None) -> int:
    t_start = time.perf_counter()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tool", choices=sorted(TOOLS))
    parser.add_argument("--qrels", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--out", required=True, help="JSON result file")
    args = parser.parse_args(argv)
    func, dist = TOOLS[args.tool]
    means, phases, num_queries = func(args.qrels, args.run)
    try:
        tool_version = version(dist)
    except Exception:  # ranklab is not always pip-installed; the tree is used
        tool_version = "worktree"
    phases["in_process_total"] = time.perf_counter() - t_start
    result = {
        "tool": args.tool,
        "version": tool_version,
        "aggregate": {m: means[m] for m in MEASURES if m in means},
        "phases": phases,
        "num_queries": num_queries,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
