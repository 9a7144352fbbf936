"""Dataset audits, the checks a paper runs on its items before any model sees them (ExpliCa
§3.1, §3.3): lexical association between the two halves of each item, frequency bins and the
balance of classes across them, with tests between classes.

Modules: ``association`` (corpus counts and association scores), ``frequency`` (frequency bins
and class balance), ``lexical`` (item frequency from its words), ``lemmas`` (the lemmatizer
registry), ``stats`` (tests between classes), ``report`` (one audit, typed).
"""

from lingdiag.audit.association import Counts, association_scores, count_corpus, read_counts
from lingdiag.audit.frequency import BINS, FrequencyAudit, frequency_audit, quartile_bins
from lingdiag.audit.lemmas import LEMMATIZERS, Lemmatizer, lemmatizer
from lingdiag.audit.lexical import LEXICAL_SOURCES, LexicalFrequency, lexical_frequency
from lingdiag.audit.report import AuditReport, AuditSources, audit
from lingdiag.audit.stats import ClassTest, Omnibus, compare_classes

__all__ = ["BINS", "LEMMATIZERS", "LEXICAL_SOURCES", "AuditReport", "AuditSources", "ClassTest", "Counts",
           "FrequencyAudit", "Lemmatizer", "LexicalFrequency", "Omnibus", "association_scores", "audit",
           "compare_classes", "count_corpus", "frequency_audit", "lemmatizer", "lexical_frequency", "quartile_bins",
           "read_counts"]
