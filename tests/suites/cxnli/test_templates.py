"""Construction templates → hypotheses, on every construction, with lemminflect verb forms."""

import json
from pathlib import Path

import pytest

from lingdiag.errors import DatasetError
from lingdiag.suites.cxnli import data
from lingdiag.suites.cxnli import templates as tpl

# (construction, premise, slots, entailment, contradiction). Premises are the paper's
# examples (§4.1, §5, Tables 2, 3, 9, 10); starred hypotheses are the paper's own wording.
CASES = [
    ("resultative", "He hammered the metal flat.", {"SBJ": "He", "V": "hammered", "OBJ": "the metal", "ADJ": "flat"},
     "The hammering caused the metal to become flat.",
     "The hammering did not cause the metal to become flat."),  # * §4.1
    ("causative-with", "Freshly ground coffee beans filled the room with a seductive, earthy aroma.",
     {"SBJ": "Freshly ground coffee beans", "V": "filled", "OBJ": "the room", "PP_OBJ": "a seductive, earthy aroma"},
     "Freshly ground coffee beans caused the room to contain a seductive, earthy aroma.",
     "Freshly ground coffee beans did not cause the room to contain a seductive, earthy aroma."),
    ("caused-motion", "I threw the stone across the river.",
     {"SBJ": "I", "V": "threw", "OBJ": "the stone", "PP": "across the river"},
     "I caused the stone to move across the river by throwing it.",  # * Table 9
     "The stone did not change locations."),
    ("comparative-correlative", "The more they work, the more I will pay them.",
     {"COMP1": "more", "CLAUSE1": "they work", "COMP2": "more", "CLAUSE2": "I will pay them"},
     "The amount they work is positively correlated with the amount I will pay them.",
     "The amount they work is negatively correlated with the amount I will pay them."),
    ("conative", "I sipped at the Heineken.", {"SBJ": "I", "V": "sipped", "PP_OBJ": "the Heineken"},
     "The Heineken was the target of the sipping motion.",
     "The Heineken was not the target of the sipping motion."),
    ("intransitive-motion", "I ran around the track.", {"SBJ": "I", "V": "ran", "PP": "around the track"},
     "I changed locations by running.",
     "I ran in a static location."),
    ("let-alone", "None of these arguments is notably strong, let alone conclusive.",
     {"XP1": "notably strong", "XP2": "conclusive", "CLAUSE1": "an argument is notably strong",
      "CLAUSE2": "an argument is conclusive"},
     "If an argument is conclusive, then an argument is notably strong.",
     "If an argument is conclusive, then it is not the case that an argument is notably strong."),
    ("way-manner", "I yawned my way back to the Narrow Neck.",
     {"SBJ": "I", "V": "yawned", "PP": "back to the Narrow Neck"},
     "I traveled back to the Narrow Neck by yawning.",
     "I traveled back to the Narrow Neck without yawning."),
    ("depictive", "A famous emperor buried the scholars alive.",
     {"SBJ": "A famous emperor", "V": "buried", "OBJ": "the scholars", "ADJ": "alive"},
     "The scholars were fully alive before a famous emperor buried them.",
     "Burying caused the scholars to become alive."),  # * §5.2
    ("intransitive-at", "Other units exploded at this complex.",
     {"SBJ": "Other units", "V": "exploded", "PP_OBJ": "this complex"},
     "The exploding took place at this complex.",
     "This complex was the target of the exploding motion."),
    ("ditransitive-np-pp", "I introduced her to my boss.",
     {"SBJ": "I", "V": "introduced", "OBJ": "her", "PP": "to my boss"},
     "I did not cause her to change locations.",
     "I caused her to move to my boss by introducing her."),
    ("intransitive-to", "He spoke to the workers on the street corner.",
     {"SBJ": "He", "V": "spoke", "PP": "to the workers"},
     "He did not change locations by speaking.",
     "He changed locations by speaking."),  # * Table 10
    ("transitive-with", "He hit the lamp with his head.",
     {"SBJ": "He", "V": "hit", "OBJ": "the lamp", "PP_OBJ": "his head"},
     "The lamp did not contain his head.",
     "He caused the lamp to contain his head."),  # * Table 10
]


def test_cases_cover_every_construction_and_the_packaged_templates_too() -> None:
    assert {c[0] for c in CASES} == set(data.CONSTRUCTIONS)
    assert set(tpl.load_templates().templates) == set(data.CONSTRUCTIONS)


@pytest.mark.parametrize("cxn,premise,slots,entailment,contradiction", CASES, ids=[c[0] for c in CASES])
def test_generator_on_every_construction(cxn: str, premise: str, slots: dict[str, str], entailment: str,
                                         contradiction: str) -> None:
    row = tpl.SlotRow("cases", 7, cxn, premise, slots, neutral="Someone was there.")
    triples = tpl.generate([row])
    assert [(t.label, t.hypothesis) for t in triples] == [
        ("entailment", entailment), ("neutral", "Someone was there."), ("contradiction", contradiction)]
    assert [t.number for t in triples] == ["1", "2", "3"]
    assert all(t.construction == cxn and t.premise == premise and t.columns["Source Row"] == "7" for t in triples)
    assert triples[1].columns["Template"] == "hand-written"


def test_present_tense_premise_and_pronoun_objects() -> None:
    rows = [
        tpl.SlotRow("s", 2, "transitive-with", "I use a mouse with my left hand.",
                    {"SBJ": "I", "V": "use", "OBJ": "a mouse", "PP_OBJ": "my left hand"}),
        tpl.SlotRow("s", 3, "depictive", "The jackhammer pounded us deaf.",
                    {"SBJ": "The jackhammer", "V": "pounded", "OBJ": "us", "ADJ": "deaf"}),
    ]
    hyps = [t.hypothesis for t in tpl.generate(rows)]
    assert hyps == ["A mouse does not contain my left hand.", "I cause a mouse to contain my left hand.",
                    "We were fully deaf before the jackhammer pounded us.", "Pounding caused us to become deaf."]


def test_override_columns_replace_derived_forms() -> None:
    row = tpl.SlotRow("s", 4, "caused-motion", "They laughed the comedian off the stage.",
                      {"SBJ": "They", "V": "laughed", "OBJ": "the comedian", "PP": "off the stage", "it@OBJ": "him"})
    assert tpl.generate([row])[0].hypothesis == "They caused the comedian to move off the stage by laughing him."
    row = tpl.SlotRow("s", 5, "resultative", "She zorbled the pan clean.",
                      {"SBJ": "She", "V": "zorbled", "OBJ": "the pan", "ADJ": "clean", "V:ing": "zorbelling"})
    assert tpl.generate([row])[0].hypothesis == "The zorbelling caused the pan to become clean."


@pytest.mark.parametrize("construction,slots,message", [
    ("resultative", {"SBJ": "He", "V": "hammered", "OBJ": "the metal"},
     "row 9, field 'ADJ': resultative needs slot ADJ"),
    ("resultative", {"SBJ": "He", "V": "hammered", "OBJ": "the iron", "ADJ": "flat"},
     "field 'OBJ': slot OBJ='the iron' does not occur in the premise"),
    ("let-alone", {"XP1": "flat", "XP2": "metal"}, "field 'CLAUSE1': let-alone needs slot CLAUSE1"),
])
def test_generator_errors_name_row_and_slot(construction: str, slots: dict[str, str], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        tpl.generate([tpl.SlotRow("slots.csv", 9, construction, "He hammered the metal flat.", slots)])


def test_slots_csv_and_json_round_trip_through_the_loader(tmp_path: Path) -> None:
    csv_path = tmp_path / "slots.csv"
    csv_path.write_bytes(b"\xef\xbb\xbfid,construction,premise,SBJ,V,OBJ,ADJ,PP,neutral\n"
                         b"a,resultative,He hammered the metal flat.,He,hammered,the metal,flat,,He was tired.\n"
                         b"b,Intransitive motion,I ran around the track.,I,ran,,,around the track,\n")
    json_path = tmp_path / "slots.json"
    json_path.write_text(json.dumps([{"construction": "depictive", "premise": "I bought the apples fresh.",
                                      "slots": {"SBJ": "I", "V": "bought", "OBJ": "the apples", "ADJ": "fresh"}}]))
    rows = tpl.read_slots(csv_path) + tpl.read_slots(json_path)
    assert [(r.row, r.construction, r.neutral) for r in rows] == [
        (2, "resultative", "He was tired."), (3, "intransitive-motion", ""), (1, "depictive", "")]
    out = tmp_path / "triples.tsv"
    tpl.write_triples(out, tpl.generate(rows))
    back = data.read_triples(out)
    assert [(t.construction, t.label) for t in back] == [
        ("resultative", "entailment"), ("resultative", "neutral"), ("resultative", "contradiction"),
        ("intransitive-motion", "entailment"), ("intransitive-motion", "contradiction"),
        ("depictive", "entailment"), ("depictive", "contradiction")]
    assert back[0].columns["Template"] == "The {V:ing} caused {OBJ} to become {ADJ}."
    items = data.to_items(back, exp=None)
    assert [it.tags["exp"] for it in items] == ["1"] * 5 + ["2"] * 2
    assert items[-1].fields["hypothesis"] == "Buying caused the apples to become fresh."
    as_json = tmp_path / "triples.json"
    tpl.write_triples(as_json, back)
    assert json.loads(as_json.read_text())[2]["label"] == "contradiction"


def test_slots_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("construction,premise\nresultative,\n")
    with pytest.raises(DatasetError, match="row 2, field 'premise': missing or empty"):
        tpl.read_slots(bad)
    bad.write_text("construction,premise\nmiddle-voice,The bread cuts easily.\n")
    with pytest.raises(DatasetError, match="row 2, field 'construction': unknown construction 'middle-voice'"):
        tpl.read_slots(bad)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"construction": "resultative"}')
    with pytest.raises(DatasetError, match="expected a JSON list"):
        tpl.read_slots(bad_json)


@pytest.mark.parametrize("body,message", [
    ("resultative: {slots: [V], entailment: ['The {V:gerund}.']}", "unknown verb form in {V:gerund}"),
    ("resultative: {slots: [V], entailment: ['{OBJ} moved.']}", "refers to 'OBJ', which is not a slot"),
    ("resultative: {slots: [A], entailment: ['{corr@A}.']}", r"\{corr@A\} takes 2 slot\(s\)"),
    ("resultative: {slots: [V]}", "no entailment or contradiction templates"),
    ("middle-voice: {slots: [V], entailment: ['{V}.']}", "unknown construction 'middle-voice'"),
])
def test_templates_file_is_validated(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("constructions:\n  " + body + "\n")
    with pytest.raises(DatasetError, match=message):
        tpl.load_templates(path)


def test_builtin_dataset_is_generated_from_the_packaged_slots() -> None:
    from lingdiag.suites.cxnli.files import load

    ds = load("builtin")
    assert len(ds.items) == 117 and {it.tags["construction"] for it in ds.items} == set(data.CONSTRUCTIONS)
    assert {it.gold for it in ds.items if it.tags["construction"] == "depictive"} == set(data.LABELS)
    pools = ds.extras["pools"]["2"]
    assert sorted(pools["three-cxnli"]) == sorted(c for c in data.CONSTRUCTIONS if data.CONSTRUCTIONS[c].exp == "1")
    assert all(len(v) == 9 for v in pools["three-cxnli"].values())
    assert all(len(v) == 3 for v in pools["one-cxnli"].values())
    assert [len(v) for v in pools["one-snli"].values()] == [3] and [len(v) for v in pools["three-snli"].values()] == [9]
