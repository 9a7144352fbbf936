"""Prompt strategies that suites share (each a ``lingdiag.suite.Strategy`` or its parts).

``chat`` (system prompt, user template, label parser), ``loglik`` (each label's answer scored by
log-likelihood under the generation prompt: competence), ``sentences`` (whole texts scored under
a scoring policy: minimal pairs), ``surprisal`` (SyntaxGym's region surprisals and predictions),
with ``regions`` (region surprisal from per-token log-probabilities) and ``formulas`` (SyntaxGym's
prediction formulas, parsed by a grammar); ``morphology`` (the one home of inflection and
lemmatisation, through lemminflect).
"""
