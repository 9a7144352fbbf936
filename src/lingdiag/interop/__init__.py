"""Other harnesses' logs in, lingdiag's runs out.

Modules: ``runs`` (a harness run as lingdiag records, written as a run directory in one atomic step and
ended by ``engine.finish``; many logs at once, with progress), ``lmeval`` (lm-evaluation-harness's
``--log_samples`` output), ``inspect_log`` (inspect_ai's ``.eval``/``.json`` logs, read by inspect's own
reader: the ``inspect`` extra), ``reread`` (an imported run's answers read again by lingdiag's reader,
beside the harness's extraction), ``eee`` (Every Eval Ever's aggregate and instance-level records).
"""
