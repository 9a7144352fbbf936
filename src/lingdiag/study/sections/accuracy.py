"""The study report's "Models × conditions" section: each run's accuracy per condition with its 95%
interval, unparsed and failed answers counted, and per language where items carry one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lingdiag.io.markdown import markdown_table
from lingdiag.reading.summary import NONE
from lingdiag.study import across
from lingdiag.study.sections import Drawn, StudySection, ci, register, size

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


def _accuracy(study: Study) -> Drawn:
    """Models × conditions: accuracy with its 95% interval, and per language where items carry one."""
    body, languages = [], []
    for s in study.runs:
        m, c, vocab = s.entry.model, s.summary.columns, s.summary.vocab
        unparsed = s.summary.unparsed
        for code in dict.fromkeys(c.condition.tolist()):
            lines = c.of(code)
            a = study.accuracies[s.entry.key][vocab.conditions.names[code]]
            body.append([s.entry.suite, vocab.conditions.names[code], m.label, m.family, size(m.n_params),
                         f"{a.value:.3f}", ci(a), a.n, int(unparsed[lines].sum()), int(c.error[lines].sum())])
            for lang in sorted(set(c.language[lines].tolist()) - {NONE}, key=lambda k: vocab.languages.names[k]):
                la = across.accuracy(c.outcome[lines][c.language[lines] == lang])
                languages.append([s.entry.suite, vocab.conditions.names[code], m.label, vocab.languages.names[lang],
                                  f"{la.value:.3f}", ci(la), la.n])
    text = markdown_table(["Suite", "Condition", "Model", "Family", "Size", "Accuracy", "95% CI", "n", "Unparsed",
                           "Errors"], body)
    text += ("\nAccuracy: right / graded (an unparsed answer is wrong; an item the backend failed on is left "
             "out and counted under Errors); 95% CI: Wilson. Models by family, size and training step.\n")
    if languages:
        text += "\n### Per language\n\n" + markdown_table(
            ["Suite", "Condition", "Model", "Language", "Accuracy", "95% CI", "n"], languages)
    return Drawn(text)


register(StudySection("study-accuracy", "Models × conditions", 20, _accuracy))
