"""Reading rating responses back, tolerant of survey-platform exports.

One row per rater × stimulus. Column names are matched case- and space-insensitively through
aliases (Prolific's ``PROLIFIC_PID``, ``participant_id``, ``Stimulus ID``...), other columns
are ignored, a byte-order mark is dropped, a rater's repeated answer to a stimulus keeps the
last row (a resubmission), and raters who missed an attention check are excluded and counted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.human.export import Study
from lingdiag.human.study import Question
from lingdiag.tabular import decimal, read_table

ALIASES = {
    "rater": ("rater", "rater_id", "participant", "participant_id", "prolific_pid", "prolific_id", "worker_id",
              "workerid", "respondent_id", "annotator"),
    "stimulus": ("stimulus", "stimulus_id", "sid", "question_id"),
}
SINGLE_SCALE_ALIASES = ("rating", "answer", "score", "response", "value")
"""Also accepted for the answer when a study has one scale question."""


def _norm(name: str) -> str:
    return re.sub(r"[\s_-]+", "_", name.strip().lower())


@dataclass(frozen=True, slots=True)
class Answer:
    """One rater's answers to one stimulus."""

    rater: str
    stimulus: str
    values: Mapping[str, float]
    """Scale question → the point chosen (unanswered questions absent)."""
    texts: Mapping[str, str]
    """Free-text question → the text (empty absent)."""


@dataclass(frozen=True, slots=True)
class Responses:
    """The answers kept, and what was dropped on the way."""

    answers: Sequence[Answer]
    """Real stimuli of raters who passed every attention check."""
    n_rows: int
    duplicates: int
    """Rows replaced by a later row of the same rater and stimulus."""
    excluded_raters: Sequence[str]
    """Raters who missed an attention check."""
    raters: Sequence[str]
    """Raters kept."""


def _find(columns: Sequence[str], names: Sequence[str]) -> str | None:
    wanted = {_norm(n) for n in names}
    return next((c for c in columns if _norm(c) in wanted), None)


def _question_columns(columns: Sequence[str], questions: Sequence[Question], path: Path) -> dict[str, str]:
    found = {}
    scales = [q for q in questions if q.scale]
    for q in questions:
        names = [q.key, q.label] + (list(SINGLE_SCALE_ALIASES) if q.scale and len(scales) == 1 else [])
        col = _find(columns, names)
        if col is None and q.scale:
            raise DatasetError(f"no answer column for {q.key!r} (accepted: {', '.join(names)})", path=path,
                               field=q.key)
        if col is not None:
            found[q.key] = col
    return found


def read_responses(paths: Sequence[Path], study: Study) -> Responses:
    """Read response files (any number: one per rater, or one platform export) in order."""
    kind = study.kind
    stimuli = {s.id: s for s in study.stimuli}
    latest: dict[tuple[str, str], Answer] = {}
    n_rows = duplicates = 0
    for path in paths:
        columns, rows = read_table(path)
        rater_col, stim_col = _find(columns, ALIASES["rater"]), _find(columns, ALIASES["stimulus"])
        for role, col in (("rater", rater_col), ("stimulus", stim_col)):
            if col is None:
                raise DatasetError(f"no {role} column (accepted: {', '.join(ALIASES[role])})", path=path, field=role)
        qcols = _question_columns(columns, kind.questions, path)
        for n, row in enumerate(rows, 2):
            rater, sid = row[rater_col].strip(), row[stim_col].strip()  # type: ignore[index]
            if not rater and not sid:
                continue
            if sid not in stimuli:
                raise DatasetError(f"unknown stimulus {sid!r} (not in the study manifest)", path=path, row=n,
                                   field=stim_col)
            values, texts = {}, {}
            for q in kind.questions:
                text = row.get(qcols.get(q.key, ""), "").strip()
                if not text:
                    continue
                if not q.scale:
                    texts[q.key] = text
                    continue
                v = decimal(text)
                if v is None:
                    raise DatasetError(f"expected a number, found {text!r}", path=path, row=n, field=qcols[q.key])
                if not q.low <= v <= q.high:  # type: ignore[operator]
                    raise DatasetError(f"{v:g} is outside the {q.low}-{q.high} scale", path=path, row=n,
                                       field=qcols[q.key])
                values[q.key] = v
            n_rows += 1
            duplicates += (rater, sid) in latest
            latest[(rater, sid)] = Answer(rater, sid, values, texts)
    failed = sorted({a.rater for a in latest.values() if (exp := stimuli[a.stimulus].expected) is not None
                     and any(a.values.get(k) != v for k, v in exp.items())})
    kept = [a for a in latest.values() if a.rater not in failed and stimuli[a.stimulus].expected is None]
    return Responses(kept, n_rows, duplicates, failed, sorted({a.rater for a in kept}))
