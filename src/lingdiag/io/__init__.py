"""Files in and out: atomic writes (:mod:`.atomic`), where lingdiag keeps files and their
checksums (:mod:`.paths`), tables read from outside (:mod:`.tabular`), outside labels
(:mod:`.importing`), official datasets (:mod:`.fetch`), item counts (:mod:`.itemcounts`),
Markdown tables and number cells (:mod:`.markdown`) and untrusted text made safe for a
terminal (:mod:`.terminal`); rows handed over in memory, e.g. a DataFrame (:mod:`.inline`);
the bounds on work an outside file or server can ask for (:mod:`.limits`) and the sandbox
that renders outside templates within them (:mod:`.templates`).

The content identity of an input file, what a reader takes from it rather than its bytes
(:mod:`.content`).

This package sits low: it imports only the root contracts (errors, records), never a suite,
a model or the orchestrator, so every layer can write through it.
"""
