"""``lingdiag view``: a read-only local web app over run directories and studies.

- ``files``: the only way the viewer opens a file (inside a run it was given, regular, bounded).
- ``index``: a byte-offset index of ``items.jsonl``, so pages read records from disk, never all at once.
- ``catalog``: the runs and groups (studies) under the given directories (each run's state is
  ``lingdiag.rundir.state``'s).
- ``filters``: which records an items page shows.
- ``difficulty``: an items page's difficulty and discrimination columns from a saved item model (sort, ranges).
- ``surprisal``: per-token surprisal of a record's scored texts, with regions and differing words.
- ``scores``: what a record's scores say (log-probs, the margin where the label is a choice, SyntaxGym's
  predictions where formulas decided it).
- ``compared``: two runs (or two conditions) compared from their summaries: the tests and the pairs.
- ``study``: a study in the viewer: ``study.json``, its grid and models in order, the runs' summaries
  kept while their files are unchanged (``Summaries``), one item across every model and checkpoint.
- ``pages``: the pages, drawn in the report's shell (:func:`lingdiag.report.html.shell`).
- ``studypages``: a study's pages: the study, its report, one item across it with its learning curve.
- ``app``: what each page draws from the catalog and the index (``PAGES``).
- ``server``: the HTTP side (starlette and uvicorn, the ``view`` extra): headers, refusals, ``serve``.
"""
