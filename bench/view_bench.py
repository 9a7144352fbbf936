"""``lingdiag view`` on a synthetic run of 10^6 records: the time to its first items page (target
under 2 s) and to a filtered page, and the memory the offsets index holds. Prints the figures; not a
timed unit test.

    PYTHONPATH=src .venv/bin/python bench/view_bench.py [--records 1000000] [--dir /tmp/view-bench]

The run is written once (about 300 MB) and kept in ``--dir`` for later runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import time
from pathlib import Path

from lingdiag.view.app import PAGES, Viewer


def write_run(root: Path, n: int) -> Path:
    run = root / "big"
    if (run / "items.jsonl").exists() and sum(1 for _ in open(run / "items.jsonl", "rb")) == n:
        return run
    run.mkdir(parents=True, exist_ok=True)
    meta = {"config": {"suite": "imperfective", "model": "synthetic", "dataset": "builtin", "axes": {}},
            "model": {"backend": "mock", "model": "synthetic", "weights_sha256": ""}, "timings": {"zero-shot": 1.0}}
    (run / "meta.json").write_text(json.dumps(meta))
    with open(run / "items.jsonl", "w", encoding="utf-8") as f:
        for k in range(n):
            label = ("True", "False", "unparsed")[k % 3]
            f.write(json.dumps({"axes": {"strategy": "zero-shot"}, "condition": "zero-shot", "correct": k % 3 == 0,
                                "detail": {}, "error": None, "fields": {}, "gold": "True", "item_id": f"item-{k:07d}",
                                "label": label, "outputs": [label], "prompts": [f"Premise {k}: the cat was sleeping."],
                                "tags": {"group": "ABC"[k % 3]}}, sort_keys=True) + "\n")
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/view-bench"))
    parser.add_argument("--clean", action="store_true", help="remove the run afterwards")
    args = parser.parse_args()
    start = time.perf_counter()
    run = write_run(args.dir, args.records)
    size = (run / "items.jsonl").stat().st_size
    took = time.perf_counter() - start
    print(f"run: {args.records} records, {size / 2**20:.0f} MiB ({took:.1f} s to write or check)")
    viewer = Viewer([args.dir])
    last = f"item-{args.records - 5:07d}"
    for name, path, query in (("first items page (cold: index built)", "/items", {"id": "0/big"}),
                              ("first items page (warm)", "/items", {"id": "0/big"}),
                              ("page 5000 (warm)", "/items", {"id": "0/big", "start": "500000"}),
                              ("runs list", "/", {}),
                              ("filtered page: outcome unparsed", "/items", {"id": "0/big", "outcome": "unparsed"}),
                              ("search near the end", "/items", {"id": "0/big", "text": last})):
        t = time.perf_counter()
        html = PAGES[path](viewer, query)
        print(f"{name}: {time.perf_counter() - t:.3f} s ({len(html) / 1024:.0f} KiB of HTML)")
    offsets = viewer.index.of(run)
    print(f"offsets index: {offsets.starts.nbytes / 2**20:.1f} MiB for {len(offsets)} records; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if args.clean:
        shutil.rmtree(args.dir)


if __name__ == "__main__":
    main()
