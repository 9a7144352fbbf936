"""Multi-token label words against single-token ones in log-likelihood conditions, same items.

A chat-context log-likelihood condition scores each label as the first words of the answer to
one prompt. With single-token labels ("yes"/"no") every choice of an item shares its whole input;
with multi-token labels ("Verdadero"/"Desconocido"/"Falso") the choices differ after the first
token. This times the transformers backend on the same prompts both ways and prints seconds per
scored token of each and their ratio (the issue's target: within 1.5x).

    PYTHONPATH=src python bench/multitoken.py [--items 48] [--repeat 3]

smollm2-135m, float32 on the CPU; the response cache is not used; each way is timed ``--repeat``
times after a warm-up and the best time kept.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from lingdiag.models.providers import load_backend
from lingdiag.records import ChatMessage, LoglikelihoodRequest

DATA = Path(__file__).parents[1] / "examples" / "suites" / "monotonicity-nli.csv"
SINGLE = ("yes", "no", "maybe")
MULTI = ("Verdadero", "Desconocido", "Falso")


def requests(labels: tuple[str, ...], n: int) -> list[LoglikelihoodRequest]:
    """Every label after each of the first ``n`` items' chat prompts."""
    with DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))[:n]
    out = []
    for r in rows:
        messages = (ChatMessage("system", "Answer with one word: " + ", ".join(labels) + "."),
                    ChatMessage("user", f"Premise: {r['premise']}\nHypothesis: {r['hypothesis']}\nAnswer:"))
        out += [LoglikelihoodRequest(context="", continuation=label, messages=messages) for label in labels]
    return out


def main() -> None:
    """Time both label sets and print the ratio per scored token."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=48)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    backend = load_backend("smollm2-135m")
    per_token = {}
    for name, labels in (("single-token", SINGLE), ("multi-token", MULTI)):
        work = requests(labels, args.items)
        backend.loglikelihood(work[:6])  # warm-up: loading, the head check
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            answers = backend.loglikelihood(work)
            best = min(best, time.perf_counter() - start)
        tokens = sum(a.n_tokens for a in answers)
        per_token[name] = best / tokens
        print(f"{name}: {len(work)} requests, {tokens} scored tokens, {best:.2f} s, "
              f"{1000 * per_token[name]:.2f} ms per scored token")
    print(f"multi-token / single-token per scored token: {per_token['multi-token'] / per_token['single-token']:.2f}x")


if __name__ == "__main__":
    main()
