"""Analyses over scored records: paired tests (:mod:`.compare`), mixed models (:mod:`.mixed`),
competence against performance (:mod:`.competence`), the DataFrame loader (:mod:`.frames`) and
the scoring-policy sweep's section (:mod:`.sweep`), what thinking did to a
reasoning model's answers (:mod:`.thinking`) and to its label preferences, scored after its own
replayed thinking (:mod:`.after_thinking`), and one diagnostic compared across languages on
aligned translations (:mod:`.languages`).

Analyses read records and run metadata; they never import a model backend or the orchestrator.
"""
