"""ImperfectiveNLI ("The Imperfective Paradox in Large Language Models").

Strategies: §4.2 and Appendix B (P1 strict-logic zero-shot, P2 definition-aware, P3
chain-of-thought JSON, P4 counterfactual JSON), greedy, 512 new tokens (Appendix D).
Metrics: §4.3 (group accuracy, TBR_C eq. 1, Δ_AA eq. 2) and Appendix E (the "False" rate
in group C, Table 6; accuracy for A and C and TBR_C per telic verb class, Tables 7-18).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.datasets import imperfective as data
from lingdiag.datasets.fetch import RAW, OfficialFile, official_path, register_official
from lingdiag.metrics.core import accuracy, grouped, markdown_table, proportion_ci, rate
from lingdiag.prompts.chat import ChatPrompt
from lingdiag.records import ItemRecord
from lingdiag.suite import Axis, Condition, Dataset, Suite, register_suite

OFFICIAL_FILE = OfficialFile(
    url=f"{RAW}/boleima/ImperfectiveParadox/f25d08e0d63bdafafc891d37d687c9162edfe4c0/data/imperfectiveNLI.json",
    local="imperfective_nli/imperfectiveNLI.json",
    sha256="ddd01d06b18b9bab24abb5bc92a8eb740bb145123658fa9a10bd86e38b4bdb5a",
)
register_official("imperfective", (OFFICIAL_FILE,))

STRATEGIES = ("zero-shot", "dap", "cot", "counterfactual")


def prompts() -> dict[str, str]:
    """The Appendix B prompt texts (``data/imperfective_prompts.yaml``)."""
    text = files("lingdiag").joinpath("data/imperfective_prompts.yaml").read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


def strategy(name: str, max_new_tokens: int = 512) -> ChatPrompt:
    """The Appendix B prompt called ``name`` (one of ``STRATEGIES``)."""
    p = prompts()
    system = p["system"] + "\n\n" + p["dap_rule"] if name == "dap" else p["system"]
    user = {"zero-shot": p["user_label"], "dap": p["user_label"], "cot": p["user_cot"],
            "counterfactual": p["user_counterfactual"]}[name]
    return ChatPrompt(system=system, user=user, labels=data.LABELS, max_new_tokens=max_new_tokens)


def load(spec: str) -> Dataset:
    """``builtin`` (generated), ``official`` (fetched) or a JSON file in the official format."""
    if spec == "builtin":
        return Dataset("builtin", data.builtin_items(), source={"builtin": "lingdiag imperfective lexicon"})
    path = official_path("imperfective", OFFICIAL_FILE.local) if spec == "official" else Path(spec)
    return Dataset(spec, data.load_json(path), source={str(path): OFFICIAL_FILE.sha256 if spec == "official" else ""})


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Mapping[str, Any]) -> list[Condition]:
    """One condition per strategy; ``max_new_tokens`` (default 512) and per-strategy
    ``max_new_tokens_<strategy>`` options cap generation.
    """
    out = []
    for name in axes["strategy"]:
        cap = int(options.get(f"max_new_tokens_{name}", options.get("max_new_tokens", 512)))
        out.append(Condition(name, {"strategy": name}, strategy(name, cap), dataset.items))
    return out


def metrics(records: Sequence[ItemRecord]) -> dict[str, Any]:
    """§4.3 and Appendix E metrics of one condition."""
    by_group = {g: [r for r in records if r.tags["group"] == g] for g in "ABCD"}
    acc = {g: accuracy(rs) for g, rs in by_group.items()}
    c = by_group["C"]
    tbr = rate("True")(c)
    telic = {g: [r for r in by_group[g] if r.tags["verb_class"] in data.TELIC_CLASSES] for g in "AC"}
    return {
        **{f"acc_{g}": acc[g] for g in "ABCD"},
        **{f"acc_{g}_ci95": proportion_ci(by_group[g], lambda r: bool(r.correct)) for g in "ABCD" if by_group[g]},
        "tbr_C": tbr,
        "tbr_C_ci95": proportion_ci(c, lambda r: r.label == "True") if c else None,
        "delta_aa": acc["D"] - tbr,
        "false_rate_C": rate("False")(c),
        "by_class": {
            "acc_A": grouped(accuracy, "verb_class")(telic["A"]),
            "acc_C": grouped(accuracy, "verb_class")(telic["C"]),
            "tbr_C": grouped(rate("True"), "verb_class")(telic["C"]),
        },
        "n_by_group": {g: len(rs) for g, rs in by_group.items()},
    }


def table(rows: Sequence[tuple[str, str, Mapping[str, Any]]]) -> str:
    """Table 3 (rows: strategy × model), then Table 6 and the per-class Tables 7-18."""
    order = {s: k for k, s in enumerate(STRATEGIES)}
    rows = sorted(rows, key=lambda r: (order.get(r[1], 99), r[0]))
    main = markdown_table(
        ["Prompt", "Model", "Acc A (↑)", "Acc B (↑)", "Acc C (↑)", "Acc D (↑)", "TBR_C (↓)", "Δ_AA (↑)",
         "\"False\" rate C", "Unparsed", "N"],
        [[c, m, x["acc_A"], x["acc_B"], x["acc_C"], x["acc_D"], x["tbr_C"], x["delta_aa"], x["false_rate_C"],
          x.get("unparsed_rate"), x.get("n")] for m, c, x in rows])
    classes = data.TELIC_CLASSES
    per_class = markdown_table(
        ["Prompt", "Model", "Metric", *[k.replace("_", " ") for k in classes]],
        [[c, m, key.replace("_", " "), *[x["by_class"][key].get(k) for k in classes]]
         for m, c, x in rows for key in ("acc_A", "acc_C", "tbr_C")])
    return ("## ImperfectiveNLI (Table 3 layout)\n\n" + main +
            "\n## Telic verb classes (Appendix E, Tables 7-18 layout)\n\n" + per_class)


register_suite(Suite(
    name="imperfective",
    description="ImperfectiveNLI: teleological bias on telic/atelic progressives (groups A-D)",
    axes=(Axis("strategy", STRATEGIES, STRATEGIES, "prompt strategies of §4.2 / Appendix B"),),
    load=load,
    conditions=conditions,
    metrics=metrics,
    table=table,
    stat_tags=("group", "verb_class"),
    build=data.build,
))


