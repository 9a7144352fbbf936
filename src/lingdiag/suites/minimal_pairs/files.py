"""BLiMP's official files (pinned commit; SHA-256 where a reference copy was checked) and the loader."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.io.fetch import RAW, OfficialFile, datasets_dir, fetched, register_official
from lingdiag.records import Item
from lingdiag.suite import Dataset
from lingdiag.suites.minimal_pairs import data

COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
PARADIGMS = (
    "adjunct_island", "anaphor_gender_agreement", "anaphor_number_agreement", "animate_subject_passive",
    "animate_subject_trans", "causative", "complex_NP_island", "coordinate_structure_constraint_complex_left_branch",
    "coordinate_structure_constraint_object_extraction", "determiner_noun_agreement_1",
    "determiner_noun_agreement_2", "determiner_noun_agreement_irregular_1", "determiner_noun_agreement_irregular_2",
    "determiner_noun_agreement_with_adj_2", "determiner_noun_agreement_with_adj_irregular_1",
    "determiner_noun_agreement_with_adj_irregular_2", "determiner_noun_agreement_with_adjective_1",
    "distractor_agreement_relational_noun", "distractor_agreement_relative_clause", "drop_argument",
    "ellipsis_n_bar_1", "ellipsis_n_bar_2", "existential_there_object_raising", "existential_there_quantifiers_1",
    "existential_there_quantifiers_2", "existential_there_subject_raising", "expletive_it_object_raising",
    "inchoative", "intransitive", "irregular_past_participle_adjectives", "irregular_past_participle_verbs",
    "irregular_plural_subject_verb_agreement_1", "irregular_plural_subject_verb_agreement_2",
    "left_branch_island_echo_question", "left_branch_island_simple_question",
    "matrix_question_npi_licensor_present", "npi_present_1", "npi_present_2", "only_npi_licensor_present",
    "only_npi_scope", "passive_1", "passive_2", "principle_A_c_command", "principle_A_case_1",
    "principle_A_case_2", "principle_A_domain_1", "principle_A_domain_2", "principle_A_domain_3",
    "principle_A_reconstruction", "regular_plural_subject_verb_agreement_1",
    "regular_plural_subject_verb_agreement_2", "sentential_negation_npi_licensor_present",
    "sentential_negation_npi_scope", "sentential_subject_island", "superlative_quantifiers_1",
    "superlative_quantifiers_2", "tough_vs_raising_1", "tough_vs_raising_2", "transitive", "wh_island",
    "wh_questions_object_gap", "wh_questions_subject_gap", "wh_questions_subject_gap_long_distance",
    "wh_vs_that_no_gap", "wh_vs_that_no_gap_long_distance", "wh_vs_that_with_gap",
    "wh_vs_that_with_gap_long_distance",
)
"""The 67 paradigms of the release."""
SHA256 = {
    "anaphor_gender_agreement.jsonl": "fd7d6e47196fa1310a251d3aa88ae9a62bb64d3cec35fc02617229d5799767e1",
    "determiner_noun_agreement_2.jsonl": "8ae7eff7c7bd384ff5ef3113984834f4d78b34559203aa9d5cb14ea8394291a9",
    "existential_there_quantifiers_1.jsonl": "4bd0f6dee3c1824b51b0dafb9fce2b00933e8053fcd4a7b99b6202e1b8b49f9e",
    "npi_present_1.jsonl": "9aa85dc5c2b0d85ea51f21db50d6d327ab5b45d1669e386d54b1360d3ac954af",
    "principle_A_case_1.jsonl": "7efb5246fe315dc2cf56b80739783cffcddee9e52650716cf5aa0f6987f7644d",
    "wh_island.jsonl": "77824ca8c0008fb7a204e785ca2dcee1b2803f666bb545bd95cb8a51e04f1a4c",
    data.HUMAN_FILE: "ea0e7c21de6b9df2fd8a94d0b175e84ea57627e4cbfa1fcba4ef8b3d0fba1b2d",
    data.MODELS_FILE: "d54b1b361559eec9182f89930d5012af89d1a35d8e2ff435637b3166e2e3037a",
}
"""Checksums of the files whose reference copies were verified; the others rely on the pinned commit."""

OFFICIAL = tuple(
    OfficialFile(url=f"{RAW}/alexwarstadt/blimp/{COMMIT}/{where}/{name}", local=f"blimp/{name}",
                 sha256=SHA256.get(name, ""))
    for where, name in [*(("data", f"{p}.jsonl") for p in PARADIGMS),
                        ("raw_results/summary", data.HUMAN_FILE), ("raw_results/summary", data.MODELS_FILE)])
register_official("blimp", OFFICIAL)

FETCHED = "blimp"
"""``--dataset blimp``: the paradigm files ``lingdiag data fetch blimp`` downloaded."""


def load(spec: str) -> Dataset:
    """``blimp`` (fetched), a directory of paradigm files, or one paradigm file.

    The human agreement and the paper's model rows are read from beside the paradigm files
    where present, and joined to each item as ``published``.
    """
    if spec == FETCHED:
        files = [p for p in fetched("blimp") if p.suffix == ".jsonl" and p.name != data.MODELS_FILE]
        if not files:
            raise DatasetError("no BLiMP paradigm downloaded yet; run: lingdiag data fetch blimp "
                               "(or --only UID,... for some)", path=datasets_dir() / "blimp")
        folder = files[0].parent
    else:
        path = Path(spec)
        if path.is_dir():
            files = sorted(p for p in path.glob("*.jsonl") if p.name != data.MODELS_FILE)
            folder = path
            if not files:
                raise DatasetError("no paradigm file (<UID>.jsonl) in this directory", path=path)
        elif path.is_file():
            files, folder = [path], path.parent
        else:
            raise DatasetError("no such file or directory", path=path)
    human_file, models_file = folder / data.HUMAN_FILE, folder / data.MODELS_FILE
    human = data.read_human(human_file) if human_file.is_file() else {}
    models = data.read_models(models_file) if models_file.is_file() else {}
    items: list[Item] = []
    for f in files:
        for it in data.read_pairs(f):
            ref = data.published(human, models, str(it.tags["UID"]))
            items.append(replace(it, fields={**it.fields, "published": ref}) if ref else it)
    seen: set[str] = set()
    for it in items:
        if it.id in seen:
            raise DatasetError(f"pair {it.id!r} appears twice", field="pairID")
        seen.add(it.id)
    sources = {str(f): SHA256.get(f.name, "") if spec == FETCHED else "" for f in files}
    for extra in (human_file, models_file):
        if extra.is_file():
            sources[str(extra)] = SHA256.get(extra.name, "") if spec == FETCHED else ""
    return Dataset(spec, items, source=sources)
