"""Analyses over scored records: paired tests (:mod:`.compare`), mixed models (:mod:`.mixed`),
competence against performance (:mod:`.competence`) and the DataFrame loader (:mod:`.frames`).

Analyses read records and run metadata; they never import a model backend or the orchestrator.
"""
