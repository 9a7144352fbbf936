"""Model backends behind one contract, and what wraps them.

``base`` (the ``Backend`` protocol, ``Capabilities``, ``Loader``), ``providers`` (model spec →
backend, the ``PROVIDERS`` registry), ``door`` (the one door every model comes through, from a
``RunConfig``: ``load_model``, ``check_model``), ``cache`` (the SQLite response cache around any backend),
``embedded`` (models shipped in wheels, converted once), ``mock`` (a backend of Python functions),
``environment`` (installed versions beside the lock, torch build, devices, threads), ``progress``
(the backends' ticks within a call, heard by the command line); the
transformers backend in ``hf/`` and the OpenAI-compatible one in ``openai/``.

Backends know nothing of suites, runs, the store or reports (an import-linter contract).
"""
