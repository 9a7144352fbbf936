"""Piped output (a batch log) gets one progress line per chunk with done/total, rate and ETA."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers import lingdiag


def test_one_line_per_chunk_when_stderr_is_not_a_terminal(fake_api: Any, tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(f"suite: imperfective\nmodel: openai:m@{fake_api.url}\nchunk_items: 2\n")
    proc = lingdiag(tmp_path, "run", "imperfective", "--config", str(tmp_path / "run.yaml"), "--strategy", "zero-shot",
                    "--limit", "6", "--out", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("zero-shot: ")]
    assert [re.match(r"zero-shot: (\d+)/6 items", ln).group(1) for ln in lines] == ["2", "4", "6"]  # type: ignore[union-attr]
    assert all(re.search(r", [\d.]+ items/s, ETA \d+:\d\d:\d\d$", ln) for ln in lines), lines
    assert "━" not in proc.stderr  # no bar drawn into a log


def test_a_slow_chunk_is_never_quiet_for_ten_seconds(fake_api: Any, tmp_path: Path) -> None:
    # The demo's config (one chunk per strategy) against a server that takes 3 s per answer, one at
    # a time: the chunk lasts ~18 s, and the log hears from it at least every 10 s, in plain lines.
    import subprocess
    import sys
    import time

    from helpers import SRC

    fake_api.delay = 3.0
    config = Path(__file__).resolve().parents[2] / "configs" / "demo-imperfective.yaml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--config", str(config), "--model",
         f"openai:m@{fake_api.url}", "--model-option", "concurrency=1", "--strategy", "zero-shot", "--limit", "6",
         "--dataset", "builtin", "--out", str(tmp_path / "run")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,  # bytes: text mode would turn a \r into a newline
        env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC})
    heard: list[tuple[float, str]] = []
    with proc:
        assert proc.stderr is not None
        for raw in proc.stderr:
            heard.append((time.monotonic(), raw.decode()))
    assert proc.wait(timeout=120) == 0, "".join(line for _, line in heard)
    text = "".join(line for _, line in heard)
    assert "\r" not in text and "━" not in text
    # Long lines are not wrapped at 80 columns: the usage line holds every counter.
    assert re.search(r"^backend: .*completion_tokens 12, .*requests 6$", text, re.M), text
    within = [line for _, line in heard if line.startswith("zero-shot (in this chunk): ")]
    assert len(within) >= 1 and re.search(r"\d+ answered, [\d,]+ tokens decoded", text), text
    start = next(t for t, line in heard if line.startswith("zero-shot"))  # the chunk's first report
    end = heard[-1][0]
    times = [t for t, _ in heard if t >= start]
    gaps = [b - a for a, b in zip([start, *times], [*times, end], strict=True)]
    assert end - start > 10 and max(gaps) <= 10, (gaps, text)


def test_tqdm_bars_are_off_when_stderr_is_a_log() -> None:
    # transformers' GGUF conversion draws tqdm bars: \r frames wrapped at 80 columns in a log.
    import subprocess
    import sys

    from helpers import SRC

    code = ("import os, sys\nsys.argv = ['lingdiag', '--help']\nfrom lingdiag.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('TQDM_DISABLE=' + os.environ.get('TQDM_DISABLE', ''))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC})
    assert proc.stdout.rstrip().endswith("TQDM_DISABLE=1"), proc.stdout[-300:] + proc.stderr
