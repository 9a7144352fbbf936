"""What the static (slot) KV cache does to decoding speed, against the dynamic cache in the same command.

``python bench/decode_cache.py`` decodes the same long prompts greedily with the embedded SmolLM2 (or
``--model``) twice on this machine: ``kv_cache=dynamic`` (the baseline: the cache grown by ``torch.cat``
at every step) and ``kv_cache=static`` (fixed rows × slots written in place, ``lingdiag.models.hf.kv``).
It prints both wall times, their ratio, and whether every answer is the same token for token. A short
warm-up call first pays for the load and the kernels' first runs. Nothing is asserted; ``--out`` keeps
the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from study_scale import long_prompts  # noqa: E402  (bench/ is not a package)

from lingdiag.io.atomic import write_atomic  # noqa: E402
from lingdiag.models.providers import load_backend  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    prompts = long_prompts(args.prompts, args.new_tokens)
    figures: dict[str, Any] = {"model": args.model, "prompts": args.prompts, "new_tokens": args.new_tokens}
    answers: dict[str, list[Any]] = {}
    for cache in ("dynamic", "static"):
        backend: Any = load_backend(args.model, {"kv_cache": cache})
        backend.generate(prompts[:2])  # warm-up
        start = time.perf_counter()
        answers[cache] = backend.generate(prompts)
        figures[f"{cache}_s"] = round(time.perf_counter() - start, 2)
    figures["generated_tokens"] = sum(g.n_tokens for g in answers["dynamic"])
    figures["dynamic_over_static"] = round(figures["dynamic_s"] / figures["static_s"], 2)
    figures["same_tokens"] = [(g.text, g.n_tokens) for g in answers["static"]] == \
        [(g.text, g.n_tokens) for g in answers["dynamic"]]
    print(json.dumps(figures, indent=1))
    if args.out:
        write_atomic(args.out, json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
