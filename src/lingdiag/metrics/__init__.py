"""Metric building blocks: pure functions over scored records, no model.

``core`` (accuracy, label rates, per-tag grouping, Wilson intervals, ``Counts`` and ``summary``),
``counts`` (metrics as functions of per-item counts: rates, gaps, F1), ``permutation`` (paired
sign-flip test of a count metric), ``correlation`` (bootstrap intervals of Spearman's ρ), ``stats`` (the one home of the
correlation guard, percentile bootstrap and Holm's correction), ``fragile`` (log-likelihood
decisions' margins and which of them a reduced dtype's noise could flip), ``interpretable`` (the one
rule for a condition whose answers cannot be read as the model's knowledge), ``reading`` (the
unparsed answers by reason, a judge model's readings against the rules').
"""
