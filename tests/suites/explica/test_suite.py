import csv
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import item_record, parsed_options
from helpers import result_row as row

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import ConfigError, DatasetError
from lingdiag.models.mock import MockBackend
from lingdiag.records import UNPARSED, Generation, LogLikelihood, as_text
from lingdiag.rundir import RunStore
from lingdiag.suites import explica as suite
from lingdiag.suites.explica import cli, data, importing, metrics, parse, prompts, tables, tasks
from lingdiag.suites.explica.options import Options
from lingdiag.suites.explica.rules import TIE

OFFICIAL = "explica/explica.csv"
HEADER = list(data.OFFICIAL_COLUMNS)


def strat(task: str, shots: int = 0, decoding: str = "greedy", options: dict[str, Any] | None = None) -> Any:
    """A condition's strategy as ``lingdiag run`` builds it: options validated, the seed apart."""
    opts = dict(options or {})
    seed = int(opts.pop("seed", 0))
    return tasks.strategy(task, shots, decoding, parsed_options(suite.SUITE, Options, opts), seed)


def conds_of(ds: Any, axes: dict[str, list[str]], options: dict[str, Any]) -> list[Any]:
    opts = dict(options)
    seed = int(opts.pop("seed", 0))
    return suite.conditions(ds, axes, parsed_options(suite.SUITE, Options, opts), seed)


def ratings(so=1.0, because=1.0, then=1.0, after=1.0):
    return {"so": so, "because": because, "then": then, "after": after}


def csv_row(pair="0", a="A man ran.", b="A man fell.", r=None, preferred=None, **extra):
    r = r or ratings(so=8.0)
    row = {"pair_id": pair, "Sentence_A": a, "Sentence_B": b,
           **{data.RATING_COLUMNS[c]: str(v) for c, v in r.items()},
           "human_preferred_connective": preferred or data.best(r), "human_preferred_connective_desc": "",
           "additional_dimension": "none"}
    row.update(extra)
    return row


def write_csv(path, rows, delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter=delimiter)
        w.writeheader()
        w.writerows(rows)
    return path


# -- gold labels (§3.2, Table 1) --------------------------------------------------------

def test_official_gold_reproduces_table1(shared_datasets):
    items = data.load_csv(shared_datasets / OFFICIAL)
    counts = Counter(it.gold or "UNRELATED" for it in items)
    # Table 1 counts the 4,800 joined sentences: each ordered pair contributes four.
    assert {k: 4 * v for k, v in counts.items()} == {"then": 1040, "after": 656, "so": 820, "because": 876,
                                                    "UNRELATED": 1408}
    assert len(items) == 1200 and len({it.id for it in items}) == 1200


def test_other_threshold_readings_miss_table1(shared_datasets):
    items = data.load_csv(shared_datasets / OFFICIAL)
    humans = [it.fields["human"] for it in items]
    strict = sum(data.is_unrelated(h) for h in humans)
    inclusive = sum(max(h.values()) <= 6 and sum(h.values()) / 4 < 5 for h in humans)
    max_only = sum(max(h.values()) < 6 for h in humans)
    assert 4 * strict == 1408 and 4 * inclusive != 1408 and 4 * max_only != 1408


def test_ties_follow_the_official_column_order(shared_datasets):
    # Loading validates human_preferred_connective against best(); tied pairs exist.
    items = data.load_csv(shared_datasets / OFFICIAL)
    tied = [it for it in items if Counter(it.fields["human"].values()).most_common(1)[0][1] > 1
            and max(it.fields["human"].values()) in [v for v, k in Counter(it.fields["human"].values()).items()
                                                      if k > 1]]
    assert len(tied) == 23
    assert all(it.tags["human_preferred"] == data.best(it.fields["human"]) for it in tied)


@pytest.mark.parametrize(("r", "gold"), [
    (ratings(so=5.99, because=5.0, then=4.0, after=4.0), None),  # max < 6, mean 4.75 < 5
    (ratings(so=6.0, because=1.0, then=1.0, after=1.0), "so"),  # a 6 is not "below 6"
    (ratings(so=5.5, because=5.5, then=4.5, after=4.5), "because"),  # mean exactly 5: related; tie → because
    (ratings(then=9.0, after=9.0), "after"),
    (ratings(so=7.0, then=7.0), "so"),
])
def test_gold_label_threshold_and_ties(r, gold):
    assert data.gold_label(r) == gold


# -- sentence joining (§3) -----------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "joined"), [
    ("The man turned up the music.", "The man wanted to dance.",
     "The man turned up the music, so the man wanted to dance."),
    ("Sarah ate a cake.", "Sarah felt sick.", "Sarah ate a cake, so Sarah felt sick."),
    ("It rained.", "I stayed at home.", "It rained, so I stayed at home."),
    ("It rained.", "I'm staying at home.", "It rained, so I'm staying at home."),
    ("The alarm rang.", "Mark woke up.", "The alarm rang, so Mark woke up."),  # a name that is also a word
    ("The jar broke.", "Grandma swept the floor.", "The jar broke, so Grandma swept the floor."),
    ("Tom met Rose.", "Rose smiled.", "Tom met Rose, so Rose smiled."),  # named inside the pair
    ("The flowers bloomed.", "Insects visited the garden.",
     "The flowers bloomed, so insects visited the garden."),
    ("NASA launched a rocket.", "NASA made the news.", "NASA launched a rocket, so NASA made the news."),
    ("Tom's friends call him \"fatty\".", "Tom is sad.", "Tom's friends call him \"fatty\", so Tom is sad."),
    ('He shouted "stop."', "The car stopped.", 'He shouted "stop", so the car stopped.'),
    ("The coach shouted.", '"Faster!" was all the coach said.',
     'The coach shouted, so "faster!" was all the coach said.'),
    ("Kate went to the dentist", "Kate had a toothache", "Kate went to the dentist, so Kate had a toothache."),
    ("Wait for it...", "The bell rang.", "Wait for it..., so the bell rang."),
])
def test_join(a, b, joined):
    assert data.join(a, b, "so") == joined


def test_official_joined_sentences_keep_names(shared_datasets):
    items = data.load_csv(shared_datasets / OFFICIAL)
    firsts = Counter(it.fields["sentences"]["then"].split(", then ", 1)[1].split()[0] for it in items)
    for name in ("Kevin", "John", "Mark", "Frank", "England", "Grandma", "Penny"):
        assert name in firsts
    for word in ("the", "there", "insects", "people", "some", "a"):
        assert word in firsts
    assert not {"The", "There", "Insects", "People", "Some", "A"} & set(firsts)


# -- loading and validation ------------------------------------------------------------------

def test_loader_reads_tsv_and_frequency_bins(tmp_path):
    path = write_csv(tmp_path / "x.tsv", [csv_row(frequency_bin="1_rare"),
                                          csv_row(a="A man fell.", b="A man ran.", r=ratings(because=9.0))],
                     delimiter="\t")
    items = data.load_csv(path)
    assert [it.id for it in items] == ["0-1", "0-2"]
    assert items[0].gold == "so" and items[0].tags["relation"] == "causal_iconic"
    assert items[0].tags["frequency_bin"] == "1_rare" and "frequency_bin" not in items[1].tags
    assert items[1].gold == "because" and items[1].tags["order"] == "anti-iconic"


@pytest.mark.parametrize(("change", "row", "field", "message"), [
    ({"rating_iconic_causal": "high"}, 2, "rating_iconic_causal", "expected a number"),
    ({"rating_iconic_temporal": "11"}, 2, "rating_iconic_temporal", "outside the 1-10 scale"),
    ({"Sentence_B": " "}, 2, "Sentence_B", "missing or empty"),
    ({"human_preferred_connective": "then"}, 2, "human_preferred_connective", "highest mean rating is 'so'"),
    ({"human_preferred_connective_desc": "iconic_temp"}, 2, "human_preferred_connective_desc", "does not describe"),
])
def test_loader_errors_name_file_row_field(tmp_path, change, row, field, message):
    path = write_csv(tmp_path / "bad.csv", [{**csv_row(), **change}])
    with pytest.raises(DatasetError) as e:
        data.load_csv(path)
    assert e.value.row == row and e.value.field == field and message in str(e.value)
    assert str(path) in str(e.value)


def test_loader_rejects_missing_column_and_duplicates(tmp_path):
    row = csv_row()
    del row["rating_anticonic_temporal"]
    with pytest.raises(DatasetError, match="missing column") as e:
        data.load_csv(write_csv(tmp_path / "a.csv", [row]))
    assert e.value.field == "rating_anticonic_temporal"
    with pytest.raises(DatasetError, match="same ordered pair is on row 2") as e:
        data.load_csv(write_csv(tmp_path / "b.csv", [csv_row(), csv_row(pair="1")]))
    assert e.value.row == 3


def test_builtin_data_is_valid_and_round_trips(tmp_path):
    items = data.builtin_items()
    counts = Counter(it.tags["relation"] for it in items)
    assert len(items) == 72 and set(counts) == {*data.CLASSES, data.UNRELATED} and min(counts.values()) >= 10
    out = tmp_path / "builtin.csv"
    assert data.write_builtin(out) == 72
    again = data.load_csv(out)
    assert [(i.id, i.gold, dict(i.fields["human"])) for i in again] == \
        [(i.id, i.gold, dict(i.fields["human"])) for i in items]


def test_builtin_spec_errors_name_entry(tmp_path):
    spec = tmp_path / "b.yaml"
    spec.write_text("- {a: 'X.', b: 'Y.', ab: so, ba: maybe}\n")
    with pytest.raises(DatasetError, match="'maybe' is not one of") as e:
        data.builtin_rows(spec)
    assert e.value.row == 1 and e.value.field == "ba"


# -- Appendix D cleaning and parsers -----------------------------------------------------------

@pytest.mark.parametrize(("text", "rating"), [
    ("8", 8), (" 10</s>", 10), ("Rating: 7", 7), ("**9**", 9), ("7 out of 10", 7), ("6/10. The connective fits.", 6),
    ("I would rate it 3.", 3), ("On a scale from 1 to 10, I give it 4", 4), ("8.0", 8), ("7.5", -1),
    ("0", -1), ("11", -1), ("The sentence is fine", -1), ("", -1), ("5<|endoftext|>", 5), ("1-10: 2", 2),
    ("1. The sentence is not entirely clear", 1), ("8. The connective fits", 8), ('Sentence 1: "Jude walked', -1),
    ("8.", 8), ("9)", 9),
    ("Sentence: 4", 4),
])
def test_parse_rating(text, rating):
    assert parse.parse_rating(text) == rating


@pytest.mark.parametrize(("text", "label"), [
    ("so", "so"), ('"because"', "because"), ("Then.", "then"), ("after<end_of_turn>", "after"),
    ("Answer: so", "so"), ("so. The first event causes the second.", "so"),
    ("The word is 'then'", "then"), ("so, then, because, after", UNPARSED), ("so, because", UNPARSED),
    ("then or after", UNPARSED), ("and", UNPARSED), ("also", UNPARSED), ("", UNPARSED),
    ('"then" then', "then"), ("# Because\nbecause", "because"), ("so so", "so"), ("then, then or after", UNPARSED),
])
def test_parse_connective(text, label):
    assert parse.parse_connective(text) == label


OPTIONS = {"A": "then", "B": "so", "C": "after", "D": "because"}


@pytest.mark.parametrize(("text", "letter"), [
    ("B", "B"), ("B.", "B"), ("(C)", "C"), ("D) because", "D"), ("A - then", "A"), ("**A**", "A"),
    ("Answer: C", "C"), ("The answer is D", "D"), ("so", "B"), ("A good choice", None), ("E", None), ("", None),
])
def test_parse_letter(text, letter):
    assert parse.parse_letter(text, OPTIONS) == letter


# -- strategies ------------------------------------------------------------------------------

ITEM = data.builtin_items()[0]


def gen(*texts):
    return [Generation(text=t) for t in texts]


def test_rating_renders_four_sentences_and_shuffles_examples_by_seed():
    zero = strat("rating", 0, "greedy", {"prompt_source": "paper"})
    reqs = zero.render(ITEM)
    assert len(reqs) == 4 and "Examples:" not in reqs[0].messages[0].content
    assert [r.messages[0].content.split("Sentence: ")[1].split("\n")[0] for r in reqs] == \
        [ITEM.fields["sentences"][c] for c in data.CONNECTIVES]
    orders = set()
    for seed in range(6):
        options = {"seed": seed, "prompt_source": "paper"}
        text = strat("rating", 1, "greedy", options).render(ITEM)[0].messages[0].content
        assert text.count("(Rating: ") == 4 and "Examples:" in text
        orders.add(tuple(sorted(("So (effect)", "Because (cause)", "After (", "Then ("), key=text.index)))
        assert text == strat("rating", 1, "greedy", options).render(ITEM)[0].messages[0].content
    assert len(orders) > 1  # different seeds, different example orders


def test_rating_parse_ties_and_missing():
    s = strat("rating")  # the authors' rules: ties alphabetical, -1 kept in the argmax
    p = s.parse(ITEM, gen("8", "8", "3", "nonsense"))  # so, because tie at 8
    assert p.label == "because" and p.detail["tied"] is True and p.detail["ratings"]["after"] == -1
    p = s.parse(ITEM, gen("8", "3", "3", "8"))  # so, after tie at 8
    assert p.label == "after" and strat("rating", options={"ties": "gold-order"}).parse(
        ITEM, gen("8", "3", "3", "8")).label == "so"
    strict = strat("rating", options={"ties": "miss"})
    assert strict.parse(ITEM, gen("8", "8", "3", "1")).label == TIE
    assert s.parse(ITEM, gen("x", "y", "z", "w")).label == "after"  # four -1: the authors' argmax
    dropped = strat("rating", options={"missing_ratings": "drop"})
    assert dropped.parse(ITEM, gen("x", "y", "z", "w")).label == UNPARSED
    assert s.parse(ITEM, gen("2", "9", "10", "4")).label == "then"


def test_constrained_requests_carry_the_answer_set():
    r = strat("rating", 0, "constrained").render(ITEM)[0]
    assert r.constraint.choices == tuple(str(k) for k in range(1, 11)) and r.max_new_tokens >= 8
    c = strat("cloze", 0, "constrained").render(ITEM)[0]
    assert sorted(c.constraint.choices) == sorted(data.CONNECTIVES)
    m = strat("mc", 1, "constrained").render(ITEM)[0]
    assert m.constraint.choices == tasks.LETTERS
    assert strat("mc", 0, "greedy").render(ITEM)[0].constraint is None


def test_mc_options_shuffle_per_item_and_seed_and_parse_back():
    orders = {tuple(strat("mc", options={"seed": s, "prompt_source": "paper"}).options(ITEM).values())
              for s in range(8)}
    assert len(orders) > 1 and all(sorted(o) == sorted(data.CONNECTIVES) for o in orders)
    s = strat("mc", options={"seed": 3, "prompt_source": "paper"})
    options = s.options(ITEM)
    text = s.render(ITEM)[0].messages[0].content
    assert all(f"- {k}. {c}" in text for k, c in options.items())
    assert s.parse(ITEM, gen("C")).label == options["C"]
    assert s.parse(ITEM, gen("I am not sure")).label == UNPARSED


def test_mc_run_reads_lower_case_letters_and_never_stops(tmp_path):
    """Issue 54: "The answer is a bit ambiguous…" and "answer: b" raised a KeyError that ended the
    run with no records; now the first is unparsed (no answer), the second is B.
    """
    answers = iter(["The answer is a bit ambiguous…", "answer: b"] * 10)
    config = RunConfig(suite="explica", model="mock", dataset="builtin", limit=4,
                       axes={"task": ["mc"], "shots": ["0"], "decoding": ["greedy"]})
    evaluate(config, MockBackend(lambda r: next(answers)), tmp_path / "r")
    records = RunStore(tmp_path / "r").load_records()
    assert len(records) == 4 and all(r.error is None for r in records)
    assert [(r.detail["letter"], r.detail.get("unparsed")) for r in records] == [(None, "no-answer"), ("B", None)] * 2
    assert all(r.label == r.detail["options"]["B"] for r in records[1::2])


def test_cloze_prompt_lists_choices_and_raw_format():
    s = strat("cloze", 1, "greedy", {"format": "raw"})
    (r,) = s.render(ITEM)
    assert r.messages == () and "Choose from: [" in r.prompt and r.prompt.count('Answer: "') == 4
    assert s.parse(ITEM, gen(" because.")).label == "because"


def test_perplexity_picks_lowest_per_token_perplexity():
    s = strat("perplexity")
    reqs = s.render(ITEM)
    assert [r.continuation for r in reqs] == [ITEM.fields["sentences"][c] for c in data.CONNECTIVES]
    assert all(r.context == "" for r in reqs)
    # so: ppl e^2; because: e^1 (lowest); then: e^3; after: e^1.5
    lls = [LogLikelihood(-20.0, 10, False), LogLikelihood(-8.0, 8, False), LogLikelihood(-30.0, 10, False),
           LogLikelihood(-15.0, 10, False)]
    p = s.parse(ITEM, lls)
    assert p.label == "because" and p.detail["perplexity"]["because"] == pytest.approx(math.e)


def test_conditions_grid_and_options():
    ds = suite.SUITE.load("builtin")
    conds = conds_of(ds, {"task": list(prompts.TASKS), "shots": ["0", "1"],
                                  "decoding": ["greedy", "constrained"]}, {"seed": 0})
    names = [c.name for c in conds]
    assert len(names) == 13 and names.count("perplexity") == 1 and "mc/1-shot/constrained" in names
    with pytest.raises(ConfigError, match="suite 'explica': promtps: unknown key; valid options: authors_model, "
                                          "authors_prompts, constrained_sampling, format, "):
        conds_of(ds, {"task": ["mc"], "shots": ["0"], "decoding": ["greedy"]}, {"seed": 0, "promtps": "x"})
    # The seed has one path (RunConfig.seed / --seed): as a suite option it is an error.
    with pytest.raises(ConfigError, match="suite 'explica': seed: unknown key"):
        suite.SUITE.parse_options({"seed": 3})
    with pytest.raises(ConfigError, match="suite 'explica': ties: Input should be 'alphabetical', 'gold-order' or "
                                          r"'miss' \(got 'random'\); valid options: "):
        suite.SUITE.parse_options({"ties": "random"})


def test_user_prompt_file_adds_variants_and_validates(tmp_path):
    good = tmp_path / "p.yaml"
    good.write_text("mc:\n  variants:\n    terse: |-\n      {examples}A: {sentence_a}\n      B: {sentence_b}\n"
                    "      {options}\n      Letter:\n")
    s = strat("mc", 1, "greedy", {"prompts": str(good), "prompt_mc": "terse"})
    text = s.render(ITEM)[0].messages[0].content
    assert text.endswith("Letter:") and "Examples:" in text and "4. Answer: D" in text
    bad = tmp_path / "bad.yaml"
    bad.write_text("rating:\n  variants:\n    broken: 'Rate {sentense}: {examples}'\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: rating.variants.broken: template uses unknown fields"):
        prompts.load_prompts(bad)
    with pytest.raises(Exception, match="prompt variant"):
        strat("cloze", options={"prompt_cloze": "nope"})


# -- metrics on a hand-computed fixture ---------------------------------------------------------

def rec(relation, label, human, scores=None, kind="ratings", freq=None):
    gold = None if relation == "unrelated" else next(c for c in data.CONNECTIVES if data.class_of(c) == relation)
    tags = {"relation": relation, "type": relation.split("_")[0], "order": relation.split("_")[-1]
            if relation != "unrelated" else "none"}
    if freq:
        tags["frequency_bin"] = freq
    detail = {kind: scores} if scores else {}
    return item_record(f"{relation}{label}{len(str(human))}", label, gold, tags=tags, fields={"human": human},
                       detail=detail)


H1 = ratings(so=8, because=2, then=6, after=3)
H2 = ratings(so=2, because=9, then=3, after=5)


def fixture():
    return [
        rec("causal_iconic", "so", H1, ratings(so=9, because=1, then=7, after=2), freq="rare"),
        rec("causal_iconic", "then", H1, ratings(so=5, because=1, then=7, after=-1), freq="common"),
        rec("causal_anti-iconic", "because", H2, ratings(so=1, because=10, then=2, after=6), freq="rare"),
        rec("temporal_iconic", UNPARSED, ratings(so=4, because=1, then=8, after=2),
            ratings(so=-1, because=-1, then=-1, after=-1)),
        rec("unrelated", "so", ratings(so=3, because=2, then=4, after=1), ratings(so=3, because=2, then=4, after=1)),
    ]


def test_metrics_hand_computed():
    m = metrics.metrics(fixture())
    assert m["accuracy"] == pytest.approx(2 / 4) and m["n_related"] == 4 and m["n_unrelated"] == 1
    assert m["by_class"]["causal_iconic"] == 0.5 and m["by_class"]["causal_anti-iconic"] == 1.0
    assert m["by_class"]["temporal_iconic"] == 0.0 and math.isnan(m["by_class"]["temporal_anti-iconic"])
    assert m["by_type"] == {"causal": pytest.approx(2 / 3), "temporal": 0.0}
    assert m["confusion"]["causal_iconic"] == {"causal_iconic": 1, "temporal_iconic": 1}
    assert m["confusion"]["temporal_iconic"] == {UNPARSED: 1}
    assert m["confusion"]["unrelated"] == {"causal_iconic": 1}
    assert m["by_frequency_bin"] == {"common": 0.0, "rare": 1.0}
    # Ratings: 20 values, 5 missing (-1).
    assert m["rating_missing_rate"] == pytest.approx(5 / 20)
    # Unrelated: model (3,2,4,1) vs human (3,2,4,1): identical ranks.
    assert m["spearman"]["unrelated"]["rho"] == pytest.approx(1.0)
    # causal_iconic: 8 points, the -1 kept as the authors did; all: 5 records x 4 = 20 points.
    assert m["spearman"]["causal_iconic"]["n"] == 8 and m["spearman"]["all"]["n"] == 20
    # Without the unreadable rating: 7 and 15.
    assert m["spearman_rated"]["causal_iconic"]["n"] == 7 and m["spearman_rated"]["all"]["n"] == 15
    assert math.isnan(m["spearman"]["temporal_iconic"]["rho"])  # no ratings at all
    dist = m["rating_distribution"]
    assert dist["related"]["model"]["-1"] == 5 and dist["unrelated"]["model"]["4"] == 1
    assert dist["related"]["human"]["8"] == 3 and sum(dist["related"]["human"].values()) == 16


def test_spearman_matches_a_hand_computed_value():
    # Ranks x: 1 2 3 4 5; y: 2 1 4 3 5 → d² = 1+1+1+1+0 = 4; ρ = 1 - 6·4 / (5·24) = 0.8
    assert metrics.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])["rho"] == pytest.approx(0.8)
    assert math.isnan(metrics.spearman([1, 1, 1], [1, 2, 3])["rho"])


def test_table_layout():
    m = metrics.metrics(fixture())
    text = tables.table([row("m1", "perplexity", {**m, "unparsed_rate": 0.0}, {"task": "perplexity"}),
                         row("m1", "rating/0-shot/greedy", m, {"task": "rating", "shots": "0", "decoding": "greedy"})])
    lines = text.splitlines()
    assert "| Task | Shots | Decoding | Model | All | Caus. Ic. | Temp. Ic. | Caus. a.Ic. | Temp. a.Ic." in text
    assert text.index("| rating | 0 | greedy |") < text.index("| perplexity (APS) |")
    assert any(line.startswith("## Spearman") for line in lines) and "Table 10" in text and "Fig. 5" in text


# -- end to end on the mock backend, and outside scores ---------------------------------------------

def ppl_of(sentence):
    return 1.0 + (sum(map(ord, sentence)) % 97) / 10


def test_imported_scores_score_exactly_like_a_run(tmp_path):
    mock = MockBackend(loglik_fn=lambda r: -math.log(ppl_of(r.continuation)))
    run = evaluate(RunConfig(suite="explica", model="mock", axes={"task": ["perplexity"]}), mock, tmp_path / "run")
    items = data.builtin_items()
    rows = [{"Sentence_A": it.fields["sentence_a"], "Sentence_B": "  " + it.fields["sentence_b"],
             "conn": c, "ppl": ppl_of(it.fields["sentences"][c])} for it in items for c in data.CONNECTIVES]
    rows = [r for r in rows if not (r["Sentence_A"].startswith("Jude") and r["conn"] == "after")]
    rows.append({"Sentence_A": "Nobody.", "Sentence_B": "Nothing.", "conn": "so", "ppl": 1.0})
    rows.append({"Sentence_A": items[5].fields["sentence_a"], "Sentence_B": items[5].fields["sentence_b"],
                 "conn": "and", "ppl": 1.0})
    path = write_csv(tmp_path / "scores.tsv", rows, delimiter="\t")
    result = importing.import_scores(path, items, importing.ScoreColumns("perplexity", "ppl", connective_col="conn"))
    assert [u["row"] for u in result.unmatched] == [len(rows), len(rows) + 1]
    assert sorted(result.incomplete) == ["0-1", "0-2"]
    imported = metrics.metrics(result.records)
    assert run.metrics["perplexity"]["n"] == 72
    records = [r for r in RunStore(tmp_path / "run").load_records() if r.item_id not in ("0-1", "0-2")]
    expected = metrics.metrics(records)
    for key in ("accuracy", "by_class", "confusion", "predicted", "n_related"):
        assert imported[key] == expected[key]
    assert imported["spearman"]["all"]["rho"] == pytest.approx(expected["spearman"]["all"]["rho"])


def test_score_cli_reports_aps_and_unmatched(tmp_path):
    items = data.builtin_items()
    rows = [{"Sentence_A": it.fields["sentence_a"], "Sentence_B": it.fields["sentence_b"], "connective": c,
             "score": it.fields["human"][c]} for it in items for c in data.CONNECTIVES]
    rows.append({"Sentence_A": "X.", "Sentence_B": "Y.", "connective": "so", "score": 3})
    path = write_csv(tmp_path / "human.csv", rows)
    cmd = [sys.executable, "-c", "from lingdiag.cli import main; main()", "score", "explica", "--scores", str(path),
           "--dataset", "builtin"]
    out = subprocess.run([*cmd, "--json"], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    assert result["metrics"]["accuracy"] == 1.0  # the human ratings themselves choose the gold connective
    assert result["matched_items"] == 72 and result["unmatched"][0]["row"] == len(rows) + 1
    text = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "| rating | – | – | human.csv | 1.00 | 1.00 | 1.00 | 1.00 | 1.00 |" in text.stdout
    assert "Rating rules: ties alphabetical, unreadable ratings keep" in text.stdout
    assert "unmatched rows: 1" in text.stderr and "row 290" in text.stderr


def test_score_out_ends_as_a_run_ends(tmp_path: Path) -> None:
    """``score explica --out`` writes metrics.json and table.md (lingdiag.engine.finish), equal to what
    ``lingdiag report`` recomputes from the records."""
    items = data.builtin_items()
    rows = [{"Sentence_A": it.fields["sentence_a"], "Sentence_B": it.fields["sentence_b"], "connective": c,
             "score": it.fields["human"][c]} for it in items for c in data.CONNECTIVES]
    path = write_csv(tmp_path / "human.csv", rows)
    out = tmp_path / "run"
    lingdiag = [sys.executable, "-c", "from lingdiag.cli import main; main()"]
    subprocess.run([*lingdiag, "score", "explica", "--scores", str(path), "--dataset", "builtin", "--out", str(out)],
                   capture_output=True, text=True, check=True)
    written = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    report = subprocess.run([*lingdiag, "report", str(out), "--json"], capture_output=True, text=True, check=True)
    assert written == json.loads(report.stdout)[str(out)]["metrics"]
    assert next(iter(written.values()))["accuracy"] == 1.0
    table = subprocess.run([*lingdiag, "report", str(out)], capture_output=True, text=True, check=True).stdout
    assert (out / "table.md").read_text(encoding="utf-8").strip() in table


def test_prompt_perplexities_rank_variants():
    mock = MockBackend(loglik_fn=lambda r: -0.01 * len(r.continuation))
    items = data.builtin_items()[:4]
    ranked = cli.prompt_perplexities(mock, items, ["rating", "mc"])
    assert set(ranked) == {"rating", "mc"} and set(ranked["mc"]) == {"paper", "plain"}
    # n_tokens is 1 in the mock, so a longer prompt has a higher "perplexity".
    assert ranked["mc"]["plain"] < ranked["mc"]["paper"]


def test_mock_run_end_to_end(tmp_path):
    mock = MockBackend(generate_fn=lambda r: "7", loglik_fn=lambda r: -len(r.continuation) / 10)
    res = evaluate(RunConfig(suite="explica", model="mock", axes={"shots": ["0"], "decoding": ["greedy"]}),
                   mock, tmp_path / "r")
    assert set(res.metrics) == {"rating/0-shot/greedy", "cloze/0-shot/greedy", "mc/0-shot/greedy", "perplexity"}
    # Every rating ties at 7 → the authors' alphabetical tie rule picks "after" everywhere.
    assert res.metrics["rating/0-shot/greedy"]["predicted"] == {"after": 72}
    assert res.metrics["rating/0-shot/greedy"]["rating_tie_rate"] == 1.0
    assert res.metrics["cloze/0-shot/greedy"]["n_unparsed"] == 72
    # "7" is no letter A-D: every MC answer is unparsed (a miss), never guessed.
    assert res.metrics["mc/0-shot/greedy"]["accuracy"] == 0.0


# -- the real model -----------------------------------------------------------------------------

@pytest.mark.slow
def test_constrained_answers_are_always_valid_on_smollm2(smollm2, tmp_path):
    cfg = RunConfig(suite="explica", model="smollm2-135m", limit=3,
                    axes={"task": ["rating", "cloze", "mc"], "shots": ["0"], "decoding": ["constrained"]})
    res = evaluate(cfg, smollm2, tmp_path / "c")
    assert not res.skipped
    records = RunStore(tmp_path / "c").load_records()
    assert len(records) == 9
    for r in records:
        if r.axes["task"] == "rating":
            assert all(as_text(o) in [str(k) for k in range(1, 11)] for o in r.outputs), r.outputs
            assert -1 not in r.detail["ratings"].values()
        elif r.axes["task"] == "cloze":
            assert as_text(r.outputs[0]) in data.CONNECTIVES and r.label == as_text(r.outputs[0])
        else:
            assert as_text(r.outputs[0]) in tasks.LETTERS and r.label in data.CONNECTIVES
    assert all(m["n_unparsed"] == 0 for m in res.metrics.values())


@pytest.mark.slow
def test_perplexity_on_smollm2(smollm2, tmp_path):
    cfg = RunConfig(suite="explica", model="smollm2-135m", limit=4, axes={"task": ["perplexity"]})
    res = evaluate(cfg, smollm2, tmp_path / "p")
    m = res.metrics["perplexity"]
    assert m["n"] == 4 and m["n_unparsed"] == 0 and 0.0 <= m["accuracy"] <= 1.0
    for r in RunStore(tmp_path / "p").load_records():
        assert all(1.0 < v < 1e4 for v in r.detail["perplexity"].values())


# -- select-prompt: through the one model door -------------------------------------------------

def _select_prompt(*args: str) -> Any:
    from typer.testing import CliRunner

    from lingdiag.cli import app, mount_suites

    mount_suites()
    return CliRunner().invoke(app, ["explica", "select-prompt", "--limit", "1", "--task", "mc", *args])


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "smollm2-135m", "--model-option", "concurency=4"],
     "the embedded backend: concurency: unknown key; valid options: adapter, batch_tokens"),
    (["-m", "smollm2-135m", "--dtype", "float64"], "the embedded backend: dtype.literal"),
    # Every model checked, with the options, before the first loads: the fast lane fails the test if
    # smollm2's weights load before the second model is refused.
    (["-m", "smollm2-135m,openai:m@http://127.0.0.1:9/v1", "--model-option", "device=cpu"],
     "the openai backend: device: unknown key; valid options: api_key_env"),
])
def test_select_prompt_options_reach_the_provider_and_are_checked_before_any_load(
        args: list[str], message: str) -> None:
    result = _select_prompt(*args)
    assert isinstance(result.exception, ConfigError), result.output
    assert message in str(result.exception) and "\n" not in str(result.exception)


def test_select_prompt_sends_the_seed_and_options_a_run_would() -> None:
    """select-prompt's configuration loads as ``lingdiag run`` loads it: the provider's options object
    takes the run's seed (an OpenAI-compatible server's draws) and ``--model-option``."""
    from lingdiag.models.door import provider_options

    config = RunConfig(suite="explica", model="openai:m@http://127.0.0.1:9/v1", model_options={"concurrency": 3})
    assert provider_options(config) == {"concurrency": 3, "seed": 0}
