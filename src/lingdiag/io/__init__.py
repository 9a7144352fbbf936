"""Readers and fetchers of outside files: tables (:mod:`.tabular`), outside labels
(:mod:`.importing`), official datasets (:mod:`.fetch`) and item counts (:mod:`.itemcounts`).
"""
