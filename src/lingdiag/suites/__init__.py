"""The built-in suites, one package each, registered on first registry lookup.

``imperfective`` (ImperfectiveNLI), ``explica`` (ExpliCa), ``cxnli`` (CxNLI), ``minimal_pairs`` (BLiMP-style
minimal pairs), ``syntaxgym`` (SyntaxGym suites), ``harness`` (other harnesses' logs imported: lm-eval,
inspect). A suite never imports another (an import-linter contract); what they share lives in
``lingdiag.prompts``, ``lingdiag.parse`` and ``lingdiag.metrics``.
"""
