"""What the transformers backend refuses once the model is known (issue 35): a text longer than
the model's context is a failed request, never scored silently past the positions the model was
trained on; a tokenizer asking to run its own code is a one-line error, never a terminal prompt."""

from __future__ import annotations

import pytest

from lingdiag.records import LoglikelihoodRequest


@pytest.mark.slow
def test_a_text_past_the_context_is_failed_not_scored(smollm2: object) -> None:
    backend = smollm2
    context = backend.loaded.context_length  # type: ignore[attr-defined]
    assert context == 8192
    long, short = backend.loglikelihood([  # type: ignore[attr-defined]
        LoglikelihoodRequest("", " the" * (context + 5)), LoglikelihoodRequest("", "The cat sat.")])
    assert long.error is not None and f"longer than the model's context of {context} tokens" in long.error
    assert short.error is None and short.logprob < 0


def test_a_tokenizer_asking_for_remote_code_is_one_line_and_never_prompts(tmp_path: object) -> None:
    import json
    import shutil
    from pathlib import Path

    import pytest

    from lingdiag.errors import ConfigError
    from lingdiag.models.embedded import EMBEDDED
    from lingdiag.models.hf.load import LoadedModel
    from lingdiag.models.hf.placement import resolve

    src, d = Path(EMBEDDED["smollm2-135m"].converted_dir()), Path(str(tmp_path))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(src / name, d / name)
    config = json.loads((d / "tokenizer_config.json").read_text())
    config.pop("tokenizer_class", None)
    (d / "tokenizer_config.json").write_text(json.dumps({**config, "auto_map": {"AutoTokenizer": ["evil.Tok", None]}}))
    (d / "config.json").write_text(json.dumps({"model_type": "evil", "auto_map": {"AutoConfig": "evil.Config"}}))
    (d / "evil.py").write_text("raise SystemExit('ran remote code')\n")
    with pytest.raises(ConfigError, match="asks to run its own code"):
        LoadedModel(str(d), resolve()).tokenizer  # noqa: B018
