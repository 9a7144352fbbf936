"""What an imported answer is read over, and lingdiag's reading of it: one rule for the importers and
``reread``. A record whose ``fields`` hold ``options`` (letter → choice text: a multiple-choice prompt that
lists them) is read for the letter (``parse.choice.read_letter``); otherwise for one of its ``choices``
(``parse.labels.parse_label``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lingdiag.parse.choice import read_letter
from lingdiag.parse.labels import parse_label


def read_answer(text: str, fields: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Lingdiag's label for the answer ``text`` to the item of ``fields``, and the reading's detail."""
    options = fields.get("options")
    if isinstance(options, Mapping) and options:
        reading = read_letter(text, {str(k): str(v) for k, v in options.items()})
        return reading.label, reading.detail()
    return parse_label(text, [str(c) for c in fields.get("choices") or ()])
