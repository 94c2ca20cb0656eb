"""The shared kernels: dcg_steps (the Learn page's table) adds up to the engine's DCG bit
for bit; a label too large for gain=exp names the qrels file and line."""

from __future__ import annotations

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.ranking.kernels import EXP_GAIN_MAX_LABEL, dcg_steps


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    "gain,discount",
    [("linear", "log2"), ("exp", "log2"), ("linear", "jarvelin"), ("exp", "jarvelin")],
)
def test_dcg_steps_add_up_to_the_engines_dcg(seed, gain, discount):
    rng = np.random.default_rng(seed)
    labels = rng.choice([-1, 0, 0, 1, 2, 3, 4], int(rng.integers(1, 40))).astype(float)
    k = int(rng.integers(1, 50))
    run, qrels = mc.io.from_relevance_vectors({"q": labels.tolist()})
    conv = mc.Conventions(gain=gain, discount=discount)
    ev = mc.evaluate(qrels, run, [f"DCG@{k}"], conventions=conv)
    steps = dcg_steps(labels, k, conv)
    assert (
        steps["dcg"].tobytes()
        == dcg_steps(labels, k, gain=gain, discount=discount)["dcg"].tobytes()
    )
    assert len(steps["rank"]) == min(k, len(labels))
    want = ev.per_query[f"DCG@{k}"].iloc[0]
    assert steps["dcg"][-1].tobytes() == np.float64(want).tobytes()
    assert np.array_equal(steps["gain"] > 0, steps["label"] > 0)


def test_dcg_steps_truncate_fractional_labels_as_the_engine():
    steps = dcg_steps([2.7, 1.2], labels_rule="truncate")
    assert steps["label"].tolist() == [2.0, 1.0]
    assert dcg_steps([2.7], labels_rule="keep")["gain"].tolist() == [2.7]
    assert dcg_steps([2.7], conventions=mc.Conventions(labels="keep"))["gain"].tolist() == [2.7]


def test_exp_gain_overflow_names_the_qrels_file_and_line(tmp_path):
    q = tmp_path / "judgements.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 2000\n")
    r = tmp_path / "run.txt"
    r.write_text("q1 Q0 a 1 2 x\nq2 Q0 c 1 2 x\nq2 Q0 d 2 1 x\n")
    for measure in ("nDCG(gain=exp)@10", "DCG(gain=exp)", "nDCG(gain=exp,ideal=retrieved)"):
        with pytest.raises(mc.InputError) as info:
            mc.evaluate(q, r, [measure])
        err = info.value
        assert err.source == str(q) and err.line == 4, measure
        assert "2000" in str(err) and f"above {EXP_GAIN_MAX_LABEL}" in str(err)
    with pytest.raises(mc.InputError) as info:  # in blocks too
        mc.evaluate(q, r, ["nDCG(gain=exp)"], block_rows=1)
    assert info.value.source == str(q) and info.value.line == 4


def test_exp_gain_overflow_without_line_numbers_gives_the_position():
    with pytest.raises(mc.InputError) as info:
        mc.evaluate({"q1": {"a": 1, "b": 5000}}, {"q1": {"a": 1.0}}, ["nDCG(gain=exp)"])
    assert "judgement 2 of the qrels as read" in str(info.value)
