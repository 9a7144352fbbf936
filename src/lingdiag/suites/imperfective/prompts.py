"""The four prompt strategies of §4.2 (P1 strict-logic zero-shot, P2 definition-aware, P3
chain-of-thought JSON, P4 counterfactual JSON), as chat prompts with the shared NLI label
parser. Greedy, 512 new tokens by default (Appendix D).

Two sources of the texts (``-o prompt_source=``): ``authors`` (the default), the templates
of the authors' ``run_inference.py`` exactly as sent (``prompts_authors.yaml``), and
``paper``, the texts typeset in Appendix B (``prompts.yaml``). They differ: the authors'
system prompts begin with a literal "System Prompt: " and use no list dashes, their P1/P2
user turn is "User Input: Premise: … Hypothesis: …" on one line, their DAP rule names two
examples per class and keeps "Do not use common sense …" after it, their CoT asks for the
final label "(True, False, or Unknown)", and their counterfactual asks for the keys
``possible_interruptions`` and ``label``. Both ask for the label under the JSON key
``label``, which the parser reads.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any, Literal

import yaml

from lingdiag.parse.labels import parse_label
from lingdiag.prompts.chat import ChatPrompt
from lingdiag.records import UNPARSED_REASON, Prediction
from lingdiag.suites.imperfective.data import LABELS

STRATEGIES = ("zero-shot", "dap", "cot", "counterfactual")

PromptSource = Literal["authors", "paper"]
SOURCES: dict[str, str] = {"authors": "run_inference.py", "paper": "Appendix B"}
"""Where each prompt source's texts come from, as named in tables."""


def _yaml(name: str) -> dict[str, Any]:
    text = files("lingdiag.suites.imperfective").joinpath(name).read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


def prompts() -> dict[str, str]:
    """The Appendix B prompt texts (``prompts.yaml`` beside this module)."""
    return {k: str(v) for k, v in _yaml("prompts.yaml").items()}


def authors_prompts() -> dict[str, dict[str, str]]:
    """The authors' templates per strategy, ``{"system": ..., "user": ...}`` (``prompts_authors.yaml``)."""
    return {name: {"system": str(t["system"]), "user": str(t["user"])}
            for name, t in _yaml("prompts_authors.yaml").items()}


def _paper_texts(name: str) -> tuple[str, str]:
    p = prompts()
    system = p["system"] + "\n\n" + p["dap_rule"] if name == "dap" else p["system"]
    user = {"zero-shot": p["user_label"], "dap": p["user_label"], "cot": p["user_cot"],
            "counterfactual": p["user_counterfactual"]}[name]
    return system, user


def strategy(name: str, max_new_tokens: int = 512, source: PromptSource = "authors") -> ChatPrompt:
    """The prompt strategy called ``name`` (one of ``STRATEGIES``).

    Args:
        name: The strategy.
        max_new_tokens: The generation cap.
        source: ``authors`` (``run_inference.py`` as run) or ``paper`` (Appendix B as printed).
    """
    if name not in STRATEGIES:
        raise KeyError(name)
    if source == "authors":
        texts = authors_prompts()[name]
        system, user = texts["system"], texts["user"]
    else:
        system, user = _paper_texts(name)
    return ChatPrompt(system=system, user=user, labels=LABELS, max_new_tokens=max_new_tokens)


def parse_answer(text: str) -> Prediction:
    """An answer produced elsewhere → True / False / Unknown or ``UNPARSED`` with the rule or the
    reason, read as a run reads its own answers (``lingdiag score imperfective``).
    """
    label, detail = parse_label(text, LABELS)
    return Prediction(label, {k: v for k, v in detail.items() if k in ("rule", UNPARSED_REASON)})
