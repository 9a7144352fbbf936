"""Condition expanders: the axes every suite takes from the run, not from the suite.

Thinking (``--thinking``: :mod:`.thinking`), competence after thinking (``--after-thinking``:
:mod:`.after_thinking`), the scoring-policy sweep (:mod:`.scoring_policy`), reduced precision
(:mod:`.precision`) and a sampling-temperature sweep (``--temperature``: :mod:`.temperature`) each
change what a run's conditions are or how they are recorded, whatever the suite. Each is one module
here behind one protocol (:mod:`.expander`) that registers itself and any ``meta.json`` part of its
own; :mod:`.registry` finds every module of this package (and third parties' plug-ins) and the run
loops over them in the order each declares. What reads their records afterwards (report sections,
analyses) lives in ``lingdiag.analysis``.
"""
