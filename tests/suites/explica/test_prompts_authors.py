"""``-o prompt_source=authors``: the prompts as the authors ran them, byte for byte, replayed from
their published result files or rendered from the same template; ``paper`` prompts unchanged.
"""

import csv
import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import parsed_options

from lingdiag.errors import ConfigError
from lingdiag.records import GenerationRequest, ResultRow
from lingdiag.suites import explica as suite
from lingdiag.suites.explica import data, tables, tasks
from lingdiag.suites.explica.metrics import ACCURACY, BY_CLASS, N_RELATED
from lingdiag.suites.explica.options import Options
from lingdiag.suites.explica.prompts import REPLAYED, SEEDED, AuthorsTemplates

OPEN_MODELS = ("Meta-Llama-3.1-8B-Instruct", "Mistral-7B-Instruct-v0.3", "Qwen2.5-7B-Instruct",
               "falcon-7b-instruct", "gemma-2-9b-it")
FILES = ([("rating", 0, m) for m in OPEN_MODELS] + [("cloze", 0, m) for m in OPEN_MODELS]
         + [("cloze", 1, m) for m in OPEN_MODELS if m != "Mistral-7B-Instruct-v0.3"])
"""Every published open-model file with a ``prompt`` column (no open-model rating few-shot file)."""
SAMPLE = 20


def strat(task: str, shots: int = 0, decoding: str = "greedy", seed: int = 0, **options: Any) -> Any:
    """A condition's strategy as ``lingdiag run`` builds it."""
    return tasks.strategy(task, shots, decoding, parsed_options(suite.SUITE, Options, options), seed)


@pytest.fixture(scope="module")
def results(shared_datasets: Path) -> Path:
    """The authors' published result files (explica_results/)."""
    path = shared_datasets / "explica_results"
    if not path.is_dir():
        pytest.skip(f"the authors' published results are not available at {path}")
    return path


@pytest.fixture(scope="module")
def official_items(shared_datasets: Path) -> dict[tuple[str, str], Any]:
    """The official items by (Sentence_A, Sentence_B)."""
    items = data.load_csv(shared_datasets / "explica" / "explica.csv")
    return {(it.fields["sentence_a"], it.fields["sentence_b"]): it for it in items}


def sample_rows(results: Path, task: str, shots: int, model: str) -> list[dict[str, str]]:
    """A fixed sample of rows of one published file."""
    kind, prefix = ("acceptability", "accept") if task == "rating" else ("cloze", "cloze")
    path = results / kind / ("fewshot" if shots else "zeroshot") / f"{prefix}_res_outlines_{model}_cleaned.tsv"
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [rows[k] for k in sorted(random.Random(f"{task}{shots}{model}").sample(range(len(rows)), SAMPLE))]


def row_order(prompt: str) -> tuple[list[str], list[str]]:
    """The connective order and the few-shot example order (by answer) of a published prompt."""
    listed = re.search(r"connectives: (.*?)\.\n\n|Choose from: \['(.*?)'\]", prompt)
    assert listed
    order = re.split(r"', '|, ", listed.group(1) or listed.group(2))
    shown = re.findall(r'Answer: "(\w+)"|\(Rating: \d+\)', prompt.split("Examples:\n")[-1]) if "Examples:" in prompt \
        else []
    return order, shown


def template_text(texts: AuthorsTemplates, task: str, row: dict[str, str], order: list[str],
                  shown: list[str]) -> str:
    """The authors' template rendered for a row, given its orders."""
    by_answer = {a: e for e in texts.examples["cloze"] for a in re.findall(r'Answer: "(\w+)"', e)}
    if task == "rating":
        return texts.rating(row["connected_sent"], order)
    return texts.cloze(row["Sentence_A"].strip(), row["Sentence_B"].strip(), order, [by_answer[a] for a in shown])


@pytest.mark.parametrize(("task", "shots", "model"), FILES)
def test_authors_prompts_replay_the_published_rows(results, official_items, task, shots, model):
    s = strat(task, shots, authors_prompts=str(results), authors_model=model)
    for row in sample_rows(results, task, shots, model):
        item = official_items[(row["Sentence_A"].strip(), row["Sentence_B"].strip())]
        requests = s.render(item)
        k = data.CONNECTIVES.index(row["conn_in_list"]) if task == "rating" else 0
        assert isinstance(requests[k], GenerationRequest) and not requests[k].messages  # raw text, no chat template
        assert requests[k].prompt == row["prompt"]
        assert s.origin(item) == REPLAYED


@pytest.mark.parametrize(("task", "shots", "model"), FILES)
def test_authors_template_with_the_row_order_is_the_published_text(results, task, shots, model):
    texts = AuthorsTemplates.load()
    for row in sample_rows(results, task, shots, model):
        order, shown = row_order(row["prompt"])
        assert sorted(order) == sorted(data.CONNECTIVES) and len(shown) == 4 * shots
        assert template_text(texts, task, row, order, shown) == row["prompt"]


def test_seeded_prompts_differ_from_the_published_only_in_order(results, official_items):
    texts = AuthorsTemplates.load()
    seeded = strat("cloze", 1, seed=3, authors_prompts=str(results), authors_model="no-such-model")
    row = sample_rows(results, "cloze", 1, "Qwen2.5-7B-Instruct")[0]
    item = official_items[(row["Sentence_A"].strip(), row["Sentence_B"].strip())]
    text = seeded.render(item)[0].prompt
    assert seeded.origin(item) == SEEDED and text != row["prompt"]
    assert text == template_text(texts, "cloze", row, *row_order(text))
    assert sorted(text) == sorted(row["prompt"])  # the same characters, in another order


def test_seeded_rating_shuffles_each_row_by_seed():
    item = data.builtin_items()[0]
    texts = [r.prompt for r in strat("rating", 0, seed=1, authors_prompts=".").render(item)]
    again = [r.prompt for r in strat("rating", 0, seed=1, authors_prompts=".").render(item)]
    other = [r.prompt for r in strat("rating", 0, seed=2, authors_prompts=".").render(item)]
    orders = [row_order(t)[0] for t in texts]
    assert texts == again and texts != other
    assert len({tuple(o) for o in orders}) > 1  # one shuffle per (pair, connective) row
    assert all(t.endswith(f"Sentence: {item.fields['sentences'][c]}\nRating: ")
               for t, c in zip(texts, data.CONNECTIVES, strict=True))


def test_mc_uses_the_gpt_prompt_with_two_examples():
    s = strat("mc", 1, authors_prompts=".")
    item = data.builtin_items()[0]
    text = s.render(item)[0].prompt
    assert text.startswith("Task Description:\nYou are given two sentences")
    assert text.count("4. Answer: ") == 3 and text.endswith("4. Answer: ")
    assert "\n".join(f"- {k}. {c}" for k, c in s.options(item).items()) in text
    assert s.origin(item) == SEEDED


PAPER_DIGESTS = {  # sha256 of every request of the built-in items, rendered before prompt_source existed
    (0, "rating", 0, "greedy"): "e98139fd877c2d03", (0, "rating", 1, "constrained"): "e65c978ef5323fe8",
    (0, "cloze", 0, "greedy"): "1a70516e91ed2a25", (0, "cloze", 1, "constrained"): "ea0c944c2cd014ca",
    (0, "mc", 0, "greedy"): "220dfc2d42474269", (0, "mc", 1, "constrained"): "a3303a3094cef2cf",
    (7, "rating", 1, "greedy"): "0cd2f5f6631a49ae", (7, "cloze", 0, "constrained"): "ee8592fb5118c782",
    (7, "cloze", 1, "greedy"): "11cd7e5799264530", (7, "mc", 1, "greedy"): "a9031bef91a5798a",
}


@pytest.mark.parametrize(("seed", "task", "shots", "decoding"), sorted(PAPER_DIGESTS))
def test_paper_prompts_are_unchanged(seed, task, shots, decoding):
    s = strat(task, shots, decoding, seed, prompt_source="paper")
    digest = hashlib.sha256()
    for item in data.builtin_items():
        for r in s.render(item):
            digest.update(json.dumps(r.key(), sort_keys=True).encode())
    assert digest.hexdigest()[:16] == PAPER_DIGESTS[(seed, task, shots, decoding)]
    assert s.origin(data.builtin_items()[0]) == "paper"


def test_defaults_follow_the_prompt_source():
    authors, paper = strat("cloze", authors_prompts="."), strat("cloze", prompt_source="paper")
    assert (authors.prompting.chat, authors.prompting.max_new_tokens) == (False, 5)
    assert (paper.prompting.chat, paper.prompting.max_new_tokens) == (True, 8)
    api = strat("cloze", authors_prompts=".", max_new_tokens=50, format="chat")
    assert (api.prompting.chat, api.prompting.max_new_tokens) == (True, 50)
    assert strat("rating", prompt_rating="plain").prompting.authors is None  # a chosen variant means paper
    with pytest.raises(ConfigError):
        suite.SUITE.parse_options({"prompt_source": "authors", "prompt_rating": "plain"})
    with pytest.raises(ConfigError):
        strat("rating", authors_prompts="/no/such/dir")


def test_conditions_and_table_name_the_prompt_source():
    ds = suite.SUITE.load("builtin")
    axes = {"task": ["cloze", "perplexity"], "shots": ["0"], "decoding": ["greedy"]}
    authors = suite.conditions(ds, axes, parsed_options(suite.SUITE, Options, {"authors_prompts": "."}), 0)
    assert authors[0].axes == {"task": "cloze", "shots": "0", "decoding": "greedy", "prompt_source": "authors",
                               "prompt_text": SEEDED}
    assert "prompt_source" not in authors[1].axes  # perplexity sends no prompt
    paper = suite.conditions(ds, axes, parsed_options(suite.SUITE, Options, {"prompt_source": "paper"}), 0)
    assert paper[0].axes["prompt_source"] == "paper"
    cells = {ACCURACY: 0.5, BY_CLASS: dict.fromkeys(data.CLASSES, 0.5), N_RELATED: 4}
    text = tables.table([ResultRow("m", c.name, c.axes, cells) for c in (authors[0], paper[0])])
    assert text.splitlines()[0].endswith("prompts: authors, paper)")
