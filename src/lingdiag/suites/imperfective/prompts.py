"""The four prompt strategies of §4.2 / Appendix B (P1 strict-logic zero-shot, P2
definition-aware, P3 chain-of-thought JSON, P4 counterfactual JSON), as chat prompts with
the shared NLI label parser. Greedy, 512 new tokens by default (Appendix D).
"""

from __future__ import annotations

from importlib.resources import files

import yaml

from lingdiag.prompts.chat import ChatPrompt
from lingdiag.suites.imperfective.data import LABELS

STRATEGIES = ("zero-shot", "dap", "cot", "counterfactual")


def prompts() -> dict[str, str]:
    """The Appendix B prompt texts (``prompts.yaml`` beside this module)."""
    text = files("lingdiag.suites.imperfective").joinpath("prompts.yaml").read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


def strategy(name: str, max_new_tokens: int = 512) -> ChatPrompt:
    """The Appendix B prompt called ``name`` (one of ``STRATEGIES``)."""
    p = prompts()
    system = p["system"] + "\n\n" + p["dap_rule"] if name == "dap" else p["system"]
    user = {"zero-shot": p["user_label"], "dap": p["user_label"], "cot": p["user_cot"],
            "counterfactual": p["user_counterfactual"]}[name]
    return ChatPrompt(system=system, user=user, labels=LABELS, max_new_tokens=max_new_tokens)
