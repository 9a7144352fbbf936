"""The engine: the one orchestrator of a run and its one end.

Modules: ``run`` (``plan``, ``evaluate``, ``run``: dataset → prompts → model → parse → records) and
``finish`` (the end of a run, of ``lingdiag merge`` and of an import: canonical records, metrics,
table, ``meta.json`` last) and ``judge`` (the pass of ``--reader judge:SPEC``: a second model reads
the answers after the rules). Nothing below the engine imports it, and neither reports, analyses,
the viewer nor studies' state reading do (import-linter contracts in ``pyproject.toml``).
"""
