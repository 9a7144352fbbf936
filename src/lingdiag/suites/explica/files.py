"""The official ExpliCa file (pinned commit, SHA-256) and the dataset loader."""

from __future__ import annotations

from pathlib import Path

from lingdiag.io.fetch import RAW, OfficialFile, official_path, register_official
from lingdiag.suite import Dataset
from lingdiag.suites.explica import data

LICENCE = "CC BY-NC-SA 4.0, not for training models"
"""As the ExpliCa authors state it: ``lingdiag adapt`` refuses to train on these files."""
OFFICIAL_FILE = OfficialFile(
    url=f"{RAW}/martinadh/ExpliCa/87f8706e3869ca2f2a85a0d7d077a61f729f2a63/data/explica/explica.csv",
    local="explica/explica.csv",
    sha256="28e6078164da1f315a52eebb6748701031cd016745e36296b691ef27eac23f63",
    licence=LICENCE,
    trainable=False,
)
FREQUENCY_FILE = OfficialFile(
    url=f"{RAW}/martinadh/ExpliCa/285a14b3b017667338ac4f9d38900fe3eda726b8/data/explica/explica_freq_4800.tsv",
    local="explica/explica_freq_4800.tsv",
    sha256="abf1d140933c8bd480bea67af20fe7eae9e4ebe19167c6b0e9da324ab6c620f3",
    licence=LICENCE,
    trainable=False,
)
"""One row per (ordered pair, connective) with its frequency bin ``freq_cat`` (Tables 3, 10, 11)."""
register_official("explica", (OFFICIAL_FILE, FREQUENCY_FILE))

# The authors' published per-item outputs (data/res/ of the same release), TASK/SHOTS/FILE or
# perplexity/FILE; TAB-separated even where named .csv. ``lingdiag data fetch explica --results``.
_RESULTS_COMMIT = "87f8706e3869ca2f2a85a0d7d077a61f729f2a63"
_RESULTS_SHA256 = {
    "acceptability/fewshot/accept_res_outlines_gpt-4o-mini_few_cleaned.tsv":
        "963362ffd86f2c61c4e1348489aa0120d6b8f06c262dd64da107ccb06f5515b9",
    "acceptability/zeroshot/accept_res_outlines_Meta-Llama-3.1-8B-Instruct_cleaned.tsv":
        "5f7bd970f2109720c0a568021ce42bb892b61b8ac8ac7e886564f404a7711e09",
    "acceptability/zeroshot/accept_res_outlines_Mistral-7B-Instruct-v0.3_cleaned.tsv":
        "f4b3f0f91febe3984f05e6ebf36ac4e7887f69f2fe4500c3804a4fec390f57f8",
    "acceptability/zeroshot/accept_res_outlines_Qwen2.5-7B-Instruct_cleaned.tsv":
        "154d39ef23415729b11a63caddd1a9b26ebc1e779d17d6ded331135109ac544c",
    "acceptability/zeroshot/accept_res_outlines_falcon-7b-instruct_cleaned.tsv":
        "f173766c3ad9a9fc72c0260bc7b7b906dd75a6b225517f6e13de103df7252cb4",
    "acceptability/zeroshot/accept_res_outlines_gemma-2-9b-it_cleaned.tsv":
        "67f2f38a3d970223f9980acb25713abdddbdb48af2d2aefcbc6da7324556afc4",
    "acceptability/zeroshot/accept_res_outlines_gpt-4o-mini_zero_cleaned.tsv":
        "d3f03b7fbb73f7fcad778c8c422c44b3d59fa91ff9a8fe7bedf04a11038696ea",
    "acceptability/zeroshot/accept_res_outlines_gpt-4o_zero_cleaned.tsv":
        "86aa748cfa176ac466ccc1ac169487e7a00b0cc1b2fb89cd5f9a3a2594653674",
    "cloze/fewshot/cloze_res_outlines_Meta-Llama-3.1-8B-Instruct_cleaned.tsv":
        "4439b3b4f5887680576f211bf9a8d1a4742f5d7cd572387d2022b384c02f158f",
    "cloze/fewshot/cloze_res_outlines_Qwen2.5-7B-Instruct_cleaned.tsv":
        "626b10787d9ca3cfecb870be9f48a5d148c9afc1d3cb13663bb4e04ee7ea7f8a",
    "cloze/fewshot/cloze_res_outlines_falcon-7b-instruct_cleaned.tsv":
        "320b861254da8337e97ae8db835b33caf0f0480e4ac800e180a1088f56fb0cb1",
    "cloze/fewshot/cloze_res_outlines_gemma-2-9b-it_cleaned.tsv":
        "3264bc97704e215f6d00d04c600db82f71f3e257468ebbb5c997c9e624b230a6",
    "cloze/fewshot/cloze_res_outlines_gpt-4o-mini_few_cleaned.tsv":
        "ad4f5c989267e73a4ac7ce73ccd376001ef0f9749340dab04a2b09a4daa20ba2",
    "cloze/zeroshot/cloze_res_outlines_Meta-Llama-3.1-8B-Instruct_cleaned.tsv":
        "d6e4e60feb2d8329c941b1b1c823616d031ce979e9b56dfba7f89719f8da680e",
    "cloze/zeroshot/cloze_res_outlines_Mistral-7B-Instruct-v0.3_cleaned.tsv":
        "80924991e4e60878bf6deef75a99bf7ffce274c80a01bbcf516748723c333934",
    "cloze/zeroshot/cloze_res_outlines_Qwen2.5-7B-Instruct_cleaned.tsv":
        "db92409a1cd77e538176f10e17be8c1939dbe10d3f19e32feaf5a9d7d55e07ad",
    "cloze/zeroshot/cloze_res_outlines_falcon-7b-instruct_cleaned.tsv":
        "481b9926b9726b06beaf9383deadef8445a36bbed5986ffbf1b695fa4d11f998",
    "cloze/zeroshot/cloze_res_outlines_gemma-2-9b-it_cleaned.tsv":
        "bb292b3f4af18521ba8886138bb09b06ff0891b6a07b6cb9a4a0ff19f648571c",
    "cloze/zeroshot/cloze_res_outlines_gpt-4o-mini_zero_cleaned.tsv":
        "bc6db2b69025b259d25e7eea3c938e257c25db7d68a016542c972876ac81e5bb",
    "mc/fewshot/mult_choice_res_outlines_gpt-4o-mini_few_cleaned.tsv":
        "ee2d178585a54801ee22f0577938fb13ece39d0e8f4fd5664c5eae52900c2df9",
    "mc/zeroshot/mult_choice_res_outlines_gpt-4o-mini_cleaned.tsv":
        "573c8e0a8016b76df0a73595725e9155c0d87a471554da6fdaf6422debd6eb05",
    "perplexity/Meta-Llama-3.1-8B-Instruct.csv": "7c2e730fad535f85bd79e8dd23a6447d04000a4afda213bf9f3d96fad37cd5be",
    "perplexity/Mistral-7B-Instruct-v0.3.csv": "f8d449ff4a1f0baeb02070888546bb4d274b7a89c7b8c2fcdb1d916dd5b8af1c",
    "perplexity/Qwen2.5-0.5B-Instruct.csv": "300cf7660923ae665bfc5a5130a89511668d7447ebc95bc959d977f78ccba16f",
    "perplexity/Qwen2.5-1.5B-Instruct.csv": "721952c81a76a3d2a5acef6b6a653eb09b4fccdfed9d4299ba20900b603160f3",
    "perplexity/Qwen2.5-3B-Instruct.csv": "aac7984489eac9d8938eef3a36a3df52559f80c38b1ed850d15d69cf97bfbb19",
    "perplexity/Qwen2.5-7B-Instruct.csv": "3b0a4607a296871f8f5350f42679faf690b7df9b76bbba6637f6178c92fb35e7",
    "perplexity/falcon-7b-instruct.csv": "c6451d3d19a3052cb49efb0fa46ca782153be39d6577b8e16a7baf0f5c3dabe2",
    "perplexity/gemma-2-9b-it.csv": "269771b664c69a389b1dac9375be01f2295988822c669560fbb4f5b202bbad94",
}
RESULT_FILES = tuple(
    OfficialFile(f"{RAW}/martinadh/ExpliCa/{_RESULTS_COMMIT}/data/res/{rel}", f"explica_results/{rel}", sha)
    for rel, sha in _RESULTS_SHA256.items())
register_official("explica-results", RESULT_FILES)


def load(spec: str) -> Dataset:
    """``builtin`` (the project's own pairs), ``official`` (fetched; with the frequency bins of
    explica_freq_4800.tsv) or a CSV/TSV path.
    """
    if spec == "builtin":
        return Dataset("builtin", data.builtin_items(), source={"builtin": "lingdiag explica_builtin.yaml"})
    if spec != "official":
        return Dataset(spec, data.load_csv(Path(spec)), source={str(Path(spec)): ""})
    path = official_path("explica", OFFICIAL_FILE.local)
    bins = official_path("explica", FREQUENCY_FILE.local)
    return Dataset(spec, data.with_frequency_bins(data.load_csv(path), bins),
                   source={str(path): OFFICIAL_FILE.sha256, str(bins): FREQUENCY_FILE.sha256})
