"""A study of four million records, reported and viewed: a synthetic study of 40 models × 100,000
minimal pairs (run directories written the way runs write them: ``items.jsonl`` in canonical order,
``meta.json`` with finish's ``finished`` part, ``metrics.json`` and ``table.md``; ``study.json``;
no model anywhere), then, each as its own process:

- ``lingdiag study report OUT --tables DIR``: wall time and peak memory (target ≤ 3 min, ≤ 2 GiB);
- ``lingdiag study status OUT``: wall time (target ≤ 5 s);
- ``lingdiag view OUT``: its start (until it prints its URL), the first index build (the runs'
  summaries, read in the background from the start, until a study item page answers), then each page
  twice, the second time after the first build (target ≤ 1 s each): the runs list, the study, the study
  report, one item across the study, a study run's item page, and two runs compared; its peak memory.

The baseline, in the same command: one run read whole as the report read it before (``load_run``: every
record held) against the same run streamed into its summary (``summarize``), peak memory and time of each
in its own process, and the ratio.

    PYTHONPATH=src .venv/bin/python bench/study_scale_report.py [--models 40] [--items 100000] [--dir DIR]

The study is written once into ``--dir`` (about 3.8 GB at full size; kept for later runs) unless
``--clean``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
PARADIGMS = ("anaphor_gender_agreement", "determiner_noun_agreement_1", "regular_plural_subject_verb_agreement_1",
             "npi_present_1", "wh_island", "sentential_negation_npi_licensor_present", "causative", "passive_1")
NOUNS = ("cat", "dog", "senator", "teacher", "child", "committee", "book", "river", "artist", "doctor")
VERBS = ("sees", "likes", "praises", "avoids", "remembers", "describes", "admires", "questions")


def models(n: int) -> list[dict[str, Any]]:
    """``n`` study models: families of sizes, then two models' checkpoints (as a real study mixes them)."""
    out: list[dict[str, Any]] = []
    sizes = (70e6, 160e6, 410e6, 1e9, 1.4e9)
    for family in range(max(n // 2 // len(sizes), 1)):
        for s in sizes:
            if len(out) < n // 2:
                out.append({"label": f"fam{family}-{s / 1e6:g}M", "family": f"fam{family}", "n_params": s})
    steps = n - len(out)
    for k in range(steps):
        base = f"ckpt{k % 2}"
        step = 1000 * (1 + k // 2) * (1 + k // 2)
        out.append({"label": f"{base}@step{step}", "family": base, "n_params": 160e6, "step": step, "base": base})
    return out


def _pair(i: int) -> tuple[str, str, str]:
    noun, other, verb = NOUNS[i % 10], NOUNS[(i // 10) % 10], VERBS[(i // 100) % 8]
    return (f"The {noun} {verb} the {other} near item {i}.", f"The {noun}s {verb} the {other} near item {i}.",
            PARADIGMS[i % len(PARADIGMS)])


def write_dataset(path: Path, items: int) -> str:
    """The pairs as BLiMP publishes them (JSONL), and the file's SHA-256."""
    if not path.exists():
        with open(path, "w", encoding="utf-8") as f:
            for i in range(items):
                good, bad, uid = _pair(i)
                f.write(json.dumps({"pairID": str(i), "UID": uid, "field": "syntax", "linguistics_term": uid,
                                    "sentence_good": good, "sentence_bad": bad}) + "\n")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_run(run: Path, k: int, data: Path, sha: str, items: int) -> dict[str, Any]:
    """One finished run of ``model`` over every pair: records as ``RunStore`` writes them, then the files
    finish writes (metrics.json, table.md, meta.json with its ``finished`` part). Returns its recorded config."""
    import numpy as np

    from lingdiag.config import RunConfig
    from lingdiag.records import ItemRecord
    from lingdiag.rundir import ModelIdentity, RunMeta, RunStore
    from lingdiag.rundir.state import finished_part
    from lingdiag.scoring import policy
    from lingdiag.suite import SUITES

    config = RunConfig(suite="minimal-pairs", model=f"synthetic-{k}", dataset=str(data))
    store = RunStore(run)
    if store.meta_path.exists():
        return config.recorded()
    run.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(k)
    ability = 0.3 + 0.05 * (k % 20)
    difficulty = np.random.default_rng(10_000).normal(0, 1.5, items)
    right = rng.random(items) < 1 / (1 + np.exp(-(ability * 3 - 1 + difficulty)))
    gap = rng.gamma(2.0, 2.0, items)
    base = -rng.uniform(20, 60, items)
    condition, axes = "simple/lingdiag", {"method": "simple", "scoring-policy": "lingdiag"}
    records = []
    for i in range(items):
        good, bad, uid = _pair(i)
        lp_good = float(round(base[i] + (gap[i] if right[i] else -gap[i]), 4))
        lp_bad = float(round(base[i], 4))
        records.append(ItemRecord(
            condition=condition, axes=axes, item_id=f"synthetic/{i}", tags={"UID": uid, "field": "syntax",
                                                                             "linguistics_term": uid},
            fields={"one_prefix_method": False, "sentence_bad": bad, "sentence_good": good},
            prompts=[{"context": "", "continuation": good}, {"context": "", "continuation": bad}],
            outputs=[{"is_greedy": False, "logprob": lp_good, "n_tokens": 9},
                     {"is_greedy": False, "logprob": lp_bad, "n_tokens": 9}],
            label="good" if lp_good > lp_bad else "bad",
            detail={"logprob_bad": lp_bad, "logprob_good": lp_good, "n_tokens_bad": 9, "n_tokens_good": 9},
            gold="good", correct=lp_good > lp_bad))
    store.append(records)
    suite = SUITES.get("minimal-pairs")
    metrics = suite.condition_metrics(records)
    store.write_json("metrics.json", {condition: metrics})
    from lingdiag.records import ResultRow

    store.write_text("table.md", suite.table([ResultRow(config.model, condition, axes, metrics)]))
    meta = RunMeta(config=config.recorded(), identity=ModelIdentity({"backend": "mock", "model": config.model,
                                                                     "weights_sha256": ""}),
                   schema_version=1, checksums={str(data): sha}, versions={"lingdiag": "bench"},
                   lock={"differs": {}, "matches": True, "unlocked": []}, seed=0, timings={condition: 100.0},
                   skipped={}, scoring_policies={condition: [policy("lingdiag").recorded()]},
                   finished=finished_part(store, records))
    store.write_meta(meta)
    return config.recorded()


def write_study(out: Path, n_models: int, items: int) -> None:
    """The study directory: its dataset, every run, ``study.json`` (with three chosen comparisons)."""
    from lingdiag.rundir.study import Attempts, Compared, RunEntry, StudyModel, StudyState, write_state

    out.mkdir(parents=True, exist_ok=True)
    data = out / "pairs.jsonl"
    sha = write_dataset(data, items)
    entries = []
    for k, m in enumerate(models(n_models)):
        model = StudyModel(spec=f"synthetic-{k}", **m)
        key = f"{m['label'].replace('@', '_')}/blimp"
        started = time.perf_counter()
        config = write_run(out / "runs" / key, k, data, sha, items)
        entries.append(RunEntry(key=key, model=model, suite="blimp", config=config,
                                state=Attempts(status="done", seconds=100.0, items_done=items, items_total=items)))
        print(f"  run {k + 1}/{n_models} {key}: {time.perf_counter() - started:.1f} s", flush=True)
    labels = [e.model.label for e in entries]
    compare = [Compared(name=f"{a} vs {b}", a=[a], b=[b]) for a, b in
               ((labels[0], labels[5]), (labels[4], labels[-1]), (labels[2], labels[n_models // 2]))]
    write_state(out, StudyState(name="scale", retries=0, runs=entries, compare=compare))


MEASURED = """
import resource, runpy, sys, time
sys.argv = {argv!r}
started = time.perf_counter()
try:
    runpy.run_module("lingdiag", run_name="__main__")
except SystemExit as e:
    code = e.code
else:
    code = 0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stderr.write(f"MEASURED {{time.perf_counter() - started:.2f}} {{peak}} {{children}}\\n")
sys.exit(code)
"""


def measured(*args: str) -> tuple[float, float, float, str]:
    """``lingdiag ARGS`` in its own process: wall seconds, its peak memory and its largest worker's (MiB), stdout."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", MEASURED.format(argv=["lingdiag", *args])], capture_output=True,
                          text=True, env=env, timeout=3600)
    line = next((x for x in done.stderr.splitlines() if x.startswith("MEASURED ")), None)
    if done.returncode != 0 or line is None:
        raise SystemExit(f"lingdiag {' '.join(args)} failed: {done.stderr[-2000:]}")
    _, seconds, rss, children = line.split()
    return float(seconds), int(rss) / 1024, int(children) / 1024, done.stdout


BASELINE = """
import resource, sys, time
from pathlib import Path
from lingdiag.reading import {what}
started = time.perf_counter()
{call}
print(f"{{time.perf_counter() - started:.2f}} {{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}}")
"""


def baseline(run: Path) -> None:
    """One run read whole (``load_run``, as the report read every run before) against streamed
    (``summarize``), each in its own process."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    figures = {}
    for name, what, call in (("load_run (records held)", "load_run", f"load_run(Path({str(run)!r}))"),
                             ("summarize (streamed)", "Vocabularies, summarize",
                              f"summarize(Path({str(run)!r}), Vocabularies())")):
        done = subprocess.run([sys.executable, "-c", BASELINE.format(what=what, call=call)], capture_output=True,
                              text=True, env=env, timeout=3600)
        seconds, mib = (float(x) for x in done.stdout.split())
        figures[name] = (seconds, mib)
        print(f"  one run, {name}: {seconds:.1f} s, peak {mib:.0f} MiB")
    (t_old, m_old), (t_new, m_new) = figures.values()
    print(f"  ratio streamed / whole: time {t_new / t_old:.2f}, peak memory {m_new / m_old:.2f}")


def viewer(out: Path, n_models: int, items: int) -> None:
    """``lingdiag view OUT``: start, first index build, then each page cold and warm; peak memory."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "lingdiag", "view", str(out), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[2]
        print(f"  start (until its URL is printed): {time.perf_counter() - started:.2f} s")

        def get(path: str) -> float:
            t = time.perf_counter()
            with urllib.request.urlopen(url.rstrip("/") + path, timeout=3600) as r:
                r.read()
            return time.perf_counter() - t

        state = json.loads((out / "study.json").read_text())
        first, second = state["runs"][0]["key"], state["runs"][5]["key"]
        item = f"synthetic/{items * 2 // 5}"
        t = time.perf_counter()
        get(f"/study-item?id=g:0&item={item}")
        print(f"  first index build (summaries of {n_models} runs, read in the background from the start; "
              f"the first item across the study waits for them): {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        get("/study?id=g:0")
        print(f"  the study report drawn (in the background once the summaries are read; its first request "
              f"waits for it): {time.perf_counter() - t:.1f} s more")
        pages = (("runs list", "/"), ("the study", "/group?id=g:0"), ("the study report", "/study?id=g:0"),
                 ("one item across the study", f"/study-item?id=g:0&item={item}"),
                 ("a study run's item page", f"/item?id=0/runs/{first}&line={items * 3 // 4}"),
                 ("two runs compared", f"/compare?a=0/runs/{first}&b=0/runs/{second}"),
                 ("compare, a page halfway through the pairs",
                  f"/compare?a=0/runs/{first}&b=0/runs/{second}&start={items // 2}"))
        for name, path in pages:
            cold, warm = get(path), get(path)
            print(f"  {name}: {cold:.2f} s, again {warm:.2f} s")
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = next(x for x in status.splitlines() if x.startswith("VmHWM")).split()[1]
        print(f"  viewer peak memory: {int(peak) / 1024:.0f} MiB")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=40)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/study-scale"))
    parser.add_argument("--clean", action="store_true", help="remove the study afterwards")
    parser.add_argument("--parts", default="report,status,viewer,baseline",
                        help="what to measure, of report, status, viewer, baseline (comma-separated)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    from lingdiag.reading.summary import READ_WORKERS

    out = args.dir / f"study-{args.models}x{args.items}"
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    started = time.perf_counter()
    write_study(out, args.models, args.items)
    size = sum(p.stat().st_size for p in out.rglob("items.jsonl"))
    print(f"study: {args.models} runs × {args.items} records ({size / 2**30:.2f} GiB of items.jsonl), written or "
          f"checked in {time.perf_counter() - started:.0f} s")
    if "report" in parts:
        seconds, mib, worker, _ = measured("study", "report", str(out), "--tables", str(args.dir / "tables"))
        workers = min(int(READ_WORKERS.value), args.models) if worker > 0 else 0
        total = mib + workers * worker
        read = f"{workers} reading processes at most {worker:.0f} MiB each" if workers else "runs read in-process"
        print(f"study report --tables: {seconds:.1f} s; peak {mib:.0f} MiB, {read}, together at most {total:.0f} "
              f"MiB (targets: 180 s, 2048 MiB; ratios {seconds / 180:.2f}, {total / 2048:.2f})")
    if "status" in parts:
        seconds, _, _, printed = measured("study", "status", str(out))
        print(f"study status: {seconds:.2f} s (target 5 s; ratio {seconds / 5:.2f}); {printed.splitlines()[-1]}")
    if "viewer" in parts:
        print("viewer:")
        viewer(out, args.models, args.items)
    if "baseline" in parts:
        print("baseline (one run of the study):")
        baseline(next((out / "runs").iterdir()) / "blimp")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.clean:
        import shutil

        shutil.rmtree(args.dir)


if __name__ == "__main__":
    main()
