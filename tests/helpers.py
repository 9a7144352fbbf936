"""Builders shared by the tests: the ``lingdiag`` command line as a real process, item
records and result rows with every field a test does not care about filled in, a real JSON
server on 127.0.0.1 (``serve``) for the fake model APIs, a scripted reasoning backend
(``Thinker``), and the embedded SmolLM2 under another chat template (``smollm2_with_template``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pytest

from lingdiag.models.base import Capabilities
from lingdiag.records import Generation, GenerationRequest, ItemRecord, LogLikelihood, LoglikelihoodRequest, ResultRow
from lingdiag.rundir import write_imported

if TYPE_CHECKING:
    from lingdiag.suite import Suite

SRC = str(Path(__file__).resolve().parents[1] / "src")
"""This checkout's source, put first on the child's ``PYTHONPATH``."""


def lingdiag(cwd: Path, *args: str, env: Mapping[str, str] | None = None, inherit: bool = False,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m lingdiag ARGS`` run in ``cwd``, output captured as text.

    The child sees only ``PATH``, a response cache under ``cwd`` and this checkout's source
    (plus ``env``), so nothing of the developer's environment leaks in; ``inherit`` passes
    the whole environment on instead.
    """
    base = dict(os.environ) if inherit else {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "lingdiag", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**base, "PYTHONPATH": SRC, **(env or {})})


def item_record(item_id: str, label: str, gold: str | None, *, condition: str = "c",
                axes: Mapping[str, str] | None = None, tags: Mapping[str, str] | None = None,
                fields: Mapping[str, Any] | None = None, detail: Mapping[str, Any] | None = None,
                error: str | None = None) -> ItemRecord:
    """One answered item: ``correct`` is ``label == gold`` (None without a gold label or with an error)."""
    return ItemRecord(condition=condition, axes=dict(axes or {}), item_id=item_id, tags=dict(tags or {}),
                      fields=dict(fields or {}), prompts=[], outputs=[], label=label, detail=dict(detail or {}),
                      gold=gold, correct=None if gold is None or error else label == gold, error=error)


def result_row(model: str, condition: str, metrics: Mapping[str, object],
               axes: dict[str, str] | None = None) -> ResultRow:
    """A result row as a run directory would give it (axes default to ``{"strategy": condition}``)."""
    return ResultRow(model, condition, axes if axes is not None else {"strategy": condition}, metrics)


Reply = tuple[int, Any]
"""An HTTP status and the JSON body answering it."""


def png_colours(png: bytes, right_of: float = 0.0) -> set[str]:
    """Every colour a PNG's pixels hold, as ``#rrggbb`` (what a figure drew, read back from the image);
    ``right_of``: only the pixels right of that share of the width (a figure's last panels).
    """
    import io

    from matplotlib.image import imread

    image = imread(io.BytesIO(png), format="png")
    image = image[:, int(right_of * image.shape[1]):]
    return {"#" + "".join(f"{round(255 * c):02x}" for c in px[:3]) for px in image.reshape(-1, image.shape[-1])}


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    """Answer ``handler``'s request with ``payload`` as a JSON body."""
    body = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def serve(post: Callable[[str, Any], Reply]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (a free port) answering each POST with ``post(path, the
    request's JSON body)``; yields its base URL, ``http://127.0.0.1:PORT/v1``.
    """

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            send_json(self, *post(self.path, request))

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


class Thinker:
    """A generation-only backend answering as a reasoning model through a server that counts
    reasoning tokens. Each request gets a number ``h`` from its messages; without thinking it
    answers ``True``, ``False`` or ``Unknown`` by ``h``, with thinking whatever ``think(h,
    request, that label)`` gives.
    """

    capabilities = Capabilities(generate=True, loglikelihood=False, thinking=True)

    def __init__(self, backend: str, think: Callable[[int, GenerationRequest, str], Generation]) -> None:
        self.identity = {"backend": backend, "model": "thinker", "weights_sha256": ""}
        self.think = think

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """One answer per request, in order."""
        out = []
        for r in requests:
            h = int(hashlib.sha256(repr(r.messages).encode()).hexdigest(), 16)
            label = ("True", "False", "Unknown")[h % 3]
            thinks = r.thinking is not None and r.thinking.thinks
            out.append(self.think(h, r, label) if thinks else Generation(text=label, n_tokens=1))
        return out

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Never asked: the backend declares it cannot."""
        raise AssertionError("not asked")


QWEN3_LIKE_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}{{ '<think>\n\n</think>\n\n' }}{% endif %}"
    "{% endif %}"
)
"""A chat template with a thinking switch written as the Qwen3 family's templates have it
(``enable_thinking`` false writes an empty ``<think></think>`` block after the assistant turn opens)."""


def smollm2_dir() -> Path:
    """The embedded SmolLM2's converted directory; the test skips where it is not installed."""
    from lingdiag.errors import MissingDependency
    from lingdiag.models.embedded import ensure_converted

    try:
        return ensure_converted("smollm2-135m")[0]
    except MissingDependency as e:
        pytest.skip(f"the embedded SmolLM2 is not installed: {e}")


def smollm2_with_template(tmp_path_factory: pytest.TempPathFactory, template: str | None) -> Path:
    """The embedded SmolLM2's files linked into a new directory, with ``template`` as its chat
    template (its own when None), for the ordinary ``hf:<dir>`` spec: no part of the model is mocked.
    """
    source = smollm2_dir()
    target = tmp_path_factory.mktemp("chat-template")
    for f in source.iterdir():
        if f.name not in ("tokenizer_config.json", "chat_template.jinja"):
            (target / f.name).symlink_to(f)
    config = json.loads((source / "tokenizer_config.json").read_text())
    config["chat_template"] = template or (source / "chat_template.jinja").read_text()
    (target / "tokenizer_config.json").write_text(json.dumps(config))
    return target


def chromium_path() -> str:
    """The Chromium the browser tests drive; absent, the test fails (``make test`` installs it)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed: `make test` installs it (apt-get install chromium)")
    return path


@contextmanager
def opened_in_chromium(path: Path, width: int = 1400, height: int = 900) -> Iterator[Any]:
    """``path`` opened in headless Chromium (Playwright) at ``width`` × ``height``; closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(path.as_uri())
            yield page
        finally:
            browser.close()


B = TypeVar("B")


def load_as(kind: type[B], spec: str, options: Mapping[str, Any] | None = None) -> B:
    """``load_backend(spec, options)``, asserted to be a ``kind`` (a test reading a backend's own
    parts, an HF model or an OpenAI client, says which backend it expects)."""
    from lingdiag.models.providers import load_backend

    backend = load_backend(spec, options)
    assert isinstance(backend, kind), f"{spec} loaded {type(backend).__name__}, not {kind.__name__}"
    return backend


def parsed_options(suite: Suite, kind: type[B], raw: Mapping[str, Any]) -> B:
    """``suite.parse_options(raw)`` (as ``lingdiag run`` validates ``-o``), asserted to be the
    suite's own options class ``kind``."""
    options = suite.parse_options(raw)
    assert isinstance(options, kind)
    return options


def stand_in(load: Any) -> Any:
    """``models=`` of ``run_study`` for stand-in models: ``load`` builds them and their specs (``a``,
    ``broken``...) are checked by nothing, since no provider knows them (``tests/study/test_checks.py``
    checks real specs)."""
    from lingdiag.study.execute import Models

    return Models(load, check=lambda config: None)


def study_backend(config: Any) -> Any:
    """A deterministic stand-in model per spec for study tests (``stand_in(study_backend)``): its
    answers and log-likelihoods hash the spec with the request, so models differ and repeat.
    A spec starting with ``broken`` fails to load."""
    import zlib

    from lingdiag.models.mock import MockBackend

    spec = config.model
    if spec.startswith("broken"):
        raise RuntimeError(f"cannot load {spec}")

    def h(text: str) -> int:
        return zlib.crc32(f"{spec}|{text}".encode())

    return MockBackend(generate_fn=lambda r: ("True", "False", "Unknown")[h(str(r.prompt or r.messages)) % 3],
                       loglik_fn=lambda r: -float(h(r.context + r.continuation) % 1000) / 10, name=spec)


def tiny_checkpoints(root: Path, steps: Sequence[int] = (1, 2, 3)) -> list[Path]:
    """A randomly initialised tiny Llama with the embedded SmolLM2's tokenizer, saved with
    ``save_pretrained`` once per step (each from its own seed, so the steps score differently)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir())
    out = []
    for step in steps:
        torch.manual_seed(step)
        config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                             num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                             bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
        target = root / f"step{step}"
        LlamaForCausalLM(config).save_pretrained(target)
        tokenizer.save_pretrained(target)
        out.append(target)
    return out


def simulated(n_models: int, n_items: int, seed: int = 0, slopes: Sequence[float] | None = None,
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Answers (models × items, 1/0) of a 2PL with abilities N(0, 1), difficulties N(0, 1)."""
    rng = np.random.default_rng(seed)
    theta = np.sort(rng.normal(size=n_models))
    a = np.asarray(slopes, float) if slopes is not None else rng.lognormal(0, 0.3, size=n_items)
    b = rng.normal(size=n_items)
    p = 1 / (1 + np.exp(-(a * (theta[:, None] - b))))
    return (rng.random((n_models, n_items)) < p).astype(np.int8), theta, a, b


IMPERFECTIVE_TAGS = {"group": "B", "verb_class": "Activity"}
"""Tags the imperfective suite's metrics read of every record."""


def write_runs(root: Path, answers: np.ndarray, *, condition: str = "c",
               record: Callable[[int, int, bool], ItemRecord] | None = None) -> list[Path]:
    """One imported imperfective run per row of ``answers`` (1 right, 0 wrong, −1 no answer written)."""
    out = []
    for m, row in enumerate(answers):
        records = []
        for j, x in enumerate(row):
            if x < 0:
                continue
            records.append(record(m, j, bool(x)) if record else
                           item_record(f"i{j:05d}", "True" if x else "False", "True", condition=condition,
                                       tags=IMPERFECTIVE_TAGS))
        path = root / f"model{m:02d}"
        write_imported(path, suite="imperfective", model=f"model{m:02d}", dataset="builtin", records=records,
                       provenance={"file": "simulated", "sha256": "0" * 64})
        out.append(path)
    return out


_OPENED: list[str] = []
_COUNTING: list[bool] = []
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _COUNTING and event == "open" and str(args[0]).endswith("items.jsonl"):
        _OPENED.append(str(args[0]))


class RecordOpens:
    """``with RecordOpens() as opened``: every ``items.jsonl`` this process opens inside the block, by path
    (an audit hook, added on first use: a hook cannot be removed, so it counts only inside the block).
    """

    def __enter__(self) -> list[str]:
        if not _HOOKED:
            sys.addaudithook(_audit)
            _HOOKED.append(True)
        _OPENED.clear()
        _COUNTING.append(True)
        return _OPENED

    def __exit__(self, *exc: object) -> None:
        _COUNTING.clear()


FIXTURES = Path(__file__).parent / "fixtures"
_COPIED: dict[str, Path] = {}


def fixture_runs(name: str) -> Path:
    """A private copy of ``tests/fixtures/NAME`` (run directories written by older versions), made once per
    process: reading a run writes its summary beside its records (``lingdiag.rundir.summary``), which must
    not land in the repository.
    """
    if name not in _COPIED:
        import tempfile

        into = Path(tempfile.mkdtemp(prefix="lingdiag-fixture-")) / name
        _COPIED[name] = Path(shutil.copytree(FIXTURES / name, into))
    return _COPIED[name]

