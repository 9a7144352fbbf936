"""The official files of BLiMP, SLING and CLAMS (pinned commits; SHA-256 where a reference copy was
checked) and the loader of any minimal-pair file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.io.fetch import RAW, OfficialFile, datasets_dir, fetched, register_official
from lingdiag.records import Item
from lingdiag.rundir import Excluded
from lingdiag.suite import Dataset
from lingdiag.suites.minimal_pairs import data, formats

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

SLING_COMMIT = "5a7f791fbb9db6d2fee66e128fe89c80ac1f993b"
SLING_SHA256 = {
    "Aspect/zai_le.jsonl": "0be78457fbeaf438a7e882c9c81779e2ec14c149a36957ac92c172d466e6c7c3",
    "Aspect/zai_guo.jsonl": "d83d5a0fbbadc2ecea74eaa4cd8193d6aeea6aa714c4ae504c9cdcffddc277ca",
    "Aspect/temporal_le.jsonl": "642545cf708a98def89bb3d569211cdc81ff14bd789899d6dde1d0f4f19621c4",
    "Classifier-Noun/cl_simple_noun.jsonl": "9369b55eb909509056f45485d8f6b69db675aadca08437c294db13dd922ad686",
    "PolarityItem/any.jsonl": "51365b567b21ce62944191f18b3135a6b9c83453806306aa2d5223832703b949",
}
"""SLING's paradigm files whose reference copies were checked (5 of its 38; the release's
``PhenomenonParadigmList.txt`` nests the others in folders not verified here, so they are not listed)."""
CLAMS_COMMIT = "36b5c9a56ecc51d3eedb6c1a85b805085d631c71"
CLAMS_SHA256 = {
    "de_evalset/simple_agrmt.txt": "c9fccddba1d0a1c13cd3d1ed61a0d1614f32f5e5dd9b58bf5c675d23c86d737d",
    "de_evalset/vp_coord.txt": "ac75ccfdd2f39e92ea345dbc44fb1c052eee573988b90954b4b419a0540e8166",
    "en_evalset/simple_agrmt.txt": "4a791512f6bda00573a722bf610aa5d6a8177a85f92694a6b802862e2e3e28b5",
    "en_evalset/vp_coord.txt": "44081727786601cdb63ccb183efb31c9c2b02263b6b64740596a04c0053bccb4",
    "fr_evalset/simple_agrmt.txt": "257bc529bd7c5f441e8ed7be4f4703698a898a50ba38bb40acee3849a0b9455e",
    "fr_evalset/vp_coord.txt": "539c1373d7add33d4524699f1c7ad14e2203a4ec6dd313b38cc2d04855ee09b3",
    "he_evalset/simple_agrmt.txt": "e2cb2e66105e0b3c785c3fb18d5c35a71654553293815e66379a78747ac5fc65",
    "he_evalset/vp_coord.txt": "d303cff32cbbb5c36b080e55e6a07cdc8d75a0e1b57589a065c8166254a5b618",
    "ru_evalset/simple_agrmt.txt": "2bb89d2de40dcc998b9a5259a2932b224942f1026c880f23cc74f357ba82ba0e",
    "ru_evalset/vp_coord.txt": "11acc9ecb7a97575f8e7ce67906e40559b48a9272a6f199d01b6612039fd41b8",
}
"""CLAMS's tests whose reference copies were checked: simple agreement and VP coordination in
its five languages (the other tests of the release are not listed)."""
register_official("sling", tuple(
    OfficialFile(url=f"{RAW}/Yixiao-Song/SLING_Data_Code/{SLING_COMMIT}/SLING_Data/{name}", local=f"sling/{name}",
                 sha256=sha, licence="MIT") for name, sha in SLING_SHA256.items()))
register_official("clams", tuple(
    OfficialFile(url=f"{RAW}/aaronmueller/clams/{CLAMS_COMMIT}/{name}", local=f"clams/{name}", sha256=sha,
                 licence="Apache-2.0") for name, sha in CLAMS_SHA256.items()))

NOT_PAIRS = {data.MODELS_FILE, "PhenomenonParadigmList.txt"}
"""Files beside the pair files that hold no pairs."""


def _files(spec: str) -> tuple[list[Path], Path, bool]:
    """The pair files ``spec`` names, the folder of BLiMP's summary files, and whether they
    are the fetched official copies.
    """
    if spec in FETCH_SETS:
        files = [p for p in fetched(spec) if p.suffix in (".jsonl", ".txt") and p.name not in NOT_PAIRS]
        if not files:
            raise DatasetError(f"no {FETCH_SETS[spec]} downloaded yet; run: lingdiag data fetch {spec}"
                               + (" (or --only UID,... for some)" if spec == FETCHED else ""),
                               path=datasets_dir() / spec)
        return files, files[0].parent, True
    path = Path(spec)
    if path.is_dir():
        # Hidden folders and files (.ipynb_checkpoints, editor backups) hold copies, not pairs.
        files = sorted(p for p in path.rglob("*") if p.suffix in (".jsonl", ".txt") and p.name not in NOT_PAIRS
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        if not files:
            raise DatasetError("no minimal-pair file (.jsonl or CLAMS .txt) in this directory", path=path)
        return files, path, False
    if path.is_file():
        return [path], path.parent, False
    raise DatasetError("no such file or directory", path=path)


FETCH_SETS = {FETCHED: "BLiMP paradigm", "sling": "SLING paradigm", "clams": "CLAMS test"}
"""``--dataset blimp|sling|clams``: the files ``lingdiag data fetch`` downloaded."""


def load(spec: str) -> Dataset:
    """``blimp``, ``sling`` or ``clams`` (fetched), or a directory or file of pairs in any
    format of ``formats.FORMATS``, detected per file or named as ``FORMAT:PATH``.

    BLiMP's human agreement and the paper's model rows are read from beside the paradigm files
    where present, and joined to each item as ``published``. Pairs that cannot be scored
    (identical or empty sentences) are the dataset's ``excluded``.
    """
    named, _, rest = spec.partition(":")
    chosen = formats.FORMATS.get(named) if rest else None
    files, folder, official = _files(rest if chosen else spec)
    human_file, models_file = folder / data.HUMAN_FILE, folder / data.MODELS_FILE
    human = data.read_human(human_file) if human_file.is_file() else {}
    models = data.read_models(models_file) if models_file.is_file() else {}
    items: list[Item] = []
    excluded: list[Excluded] = []
    seen: dict[str, Path] = {}
    for f in files:
        pairs = (chosen or formats.detect(f)).read(f)
        excluded += pairs.excluded
        for it in pairs.items:
            if it.id in seen:
                where = "twice in this file" if seen[it.id] == f else f"in {seen[it.id]} and in this file"
                raise DatasetError(f"pair {it.id!r} appears {where}", path=f, field="pairID")
            seen[it.id] = f
            ref = data.published(human, models, str(it.tags["UID"]))
            items.append(replace(it, fields={**it.fields, "published": ref}) if ref else it)
    checked = {**SHA256, **SLING_SHA256, **CLAMS_SHA256}
    sources = {str(f): _known(f, checked) if official else "" for f in files}
    for extra in (human_file, models_file):
        if extra.is_file():
            sources[str(extra)] = SHA256.get(extra.name, "") if official else ""
    return Dataset(spec, items, source=sources, excluded=excluded)


def _known(path: Path, checked: dict[str, str]) -> str:
    """The registered checksum of a fetched file, by its name under its data set's folder."""
    return next((sha for name, sha in checked.items() if path.as_posix().endswith("/" + name)), "")
