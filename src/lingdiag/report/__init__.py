"""Reports from stored records only: no model, no particular suite, no orchestrator.

``tables`` (each suite's tables over the rows of many runs), ``html`` (the self-contained HTML
report and the page shell every lingdiag page is drawn in), ``sections`` (the registered sections of
the page, one module each), ``page`` (what every section reads, computed once), ``markup`` (the
suites' markdown, tables, notes and figures as escaped HTML), ``findings`` (what the report says
first), ``browser`` (the item browser's data),
``markdown`` (suite markdown read into blocks), ``export`` (tables as Markdown and LaTeX files),
``rules`` (which parse rule took each answer: ``lingdiag inspect``), ``scaling`` (a metric against
parameter count, one line per model family), ``budget`` (a metric and the unfinished rate against the
thinking budget of a budget sweep).
"""
