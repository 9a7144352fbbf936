"""Condition expanders: the axes every suite takes from the run, not from the suite.

Thinking (``--thinking``: :mod:`.thinking`), competence after thinking (``--after-thinking``:
:mod:`.after_thinking`), the scoring-policy sweep (:mod:`.scoring_policy`) and reduced precision
(:mod:`.precision`) each change what a run's conditions are or how they are recorded,
whatever the suite. Each is one module here behind one protocol (:mod:`.expander`), and the run
loops over them in the order of :mod:`.registry`; what reads their records afterwards (report
sections, analyses) lives in ``lingdiag.analysis``.
"""
