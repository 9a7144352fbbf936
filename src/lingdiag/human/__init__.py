"""Human judgments, both ways: export a rating study from any dataset (platform CSV, offline
HTML form), import the responses, measure agreement and derive gold labels by a named rule.

Modules: ``study`` (study types, the ``STUDIES`` registry), ``export`` (the study's files),
``importing`` (response files read back), ``agreement`` (inter-rater agreement), ``gold`` (gold
labels by a named rule, the ``GOLD_RULES`` registry), ``results`` (``lingdiag human import``
end to end), ``compare`` (human ratings as the reference for a model's answers).
"""

from lingdiag.human.agreement import Agreement, agreement
from lingdiag.human.compare import ItemVsRaters, ModelVsHuman, compare
from lingdiag.human.export import Study, build_study, export
from lingdiag.human.gold import GOLD_RULES, GoldRule, ItemGold, derive, gold_rule, write_dataset
from lingdiag.human.importing import Answer, Responses, read_responses
from lingdiag.human.results import ImportReport, import_study
from lingdiag.human.study import STUDIES, Question, Stimulus, StudyType

__all__ = ["GOLD_RULES", "STUDIES", "Agreement", "Answer", "GoldRule", "ImportReport", "ItemGold", "ItemVsRaters",
           "ModelVsHuman", "Question", "Responses", "Stimulus", "Study", "StudyType", "agreement", "build_study",
           "compare", "derive", "export", "gold_rule", "import_study", "read_responses", "write_dataset"]
