"""The peers' interfaces on RankLab's engine, each with that tool's numbers and conventions.

- :mod:`metrics_core.compat.trec_eval`: trec_eval's output, byte for byte (the
  ``trec_eval`` subcommand of the command line); :mod:`~metrics_core.compat.trec_measures`
  holds trec_eval's measure table.
- :mod:`metrics_core.compat.pytrec_eval`: pytrec_eval's ``RelevanceEvaluator`` and
  ``compute_aggregated_measure``.
- :mod:`metrics_core.compat.ir_measures`: ir_measures' readers, measure objects,
  ``evaluator``, ``calc_aggregate``, ``iter_calc``, ``calc`` (each measure as the provider
  ir_measures picks computes it); its command line is ``ranklab ir_measures``.
- :mod:`metrics_core.compat.ranx`: ranx's ``Qrels``, ``Run`` and ``evaluate``.
- :mod:`metrics_core.compat.beir`: BEIR's ``EvaluateRetrieval.evaluate`` (with
  ``ignore_identical_ids`` on, its default) and ``evaluate_custom``.
- :mod:`metrics_core.ranking.ranx_names`: ranx's measure spellings (``ndcg@10``,
  ``hit_rate@5``, ``r-precision`` ...) for the measure registry.
- results in the peers' shapes (a long frame, pytrec_eval's nested dict) are the
  :class:`~metrics_core.Evaluation`'s own: ``ev.to_frame(long=True)``,
  ``ev.to_dict(nested=True)``.

Switching is one changed import; see the README's "Switching from ..." section.
"""
