"""A chat template read through ``--model-option tokenizer=DIR`` is someone else's code: it renders
within the bounds of suite-file templates (issue 35). A hostile template (a huge power, a long
``range``, nested ``range`` loops, a huge output) stops ``lingdiag run`` with a one-line error naming
the directory and the bound, well before the test's own timeout; a well-formed template writes exactly what
transformers' ``apply_chat_template`` writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import pytest
from helpers import QWEN3_LIKE_TEMPLATE, smollm2_with_template

from lingdiag.models.hf.load import LoadedModel
from lingdiag.models.hf.placement import resolve
from lingdiag.records import ChatMessage, GenerationRequest
from lingdiag.thinking import Thinking

REFUSING = (  # Gemma-2's system check, with special-token variables and transformers' globals and filters
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ bos_token }}{% set ns = namespace(n=0) %}{% for message in messages %}{% set ns.n = ns.n + 1 %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] | trim + '<|im_end|>\n' }}"
    "{{ message | tojson }}{% endfor %}{{ ns.n }}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% endif %}"
)
HOSTILE = {
    "power": ("{{ 2**(10**10) }}", "2 ** 10000000000 in a template is too large a number (more than 4,096 bits"),
    "nested range": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                     "takes too long; the limit is 2 seconds per template rendering; raise it with "
                     "LINGDIAG_TEMPLATE_SECONDS=N"),
    "long range": ("{% for i in range(10**9) %}{% endfor %}",
                   "range() of 1,000,000,000 numbers in a template; at most 100,000 (a fixed limit)"),
    # 20 MB (20 times the bound), small enough to render whole before the fix.
    "huge output": ("{% for i in range(200) %}{{ 'x' * 100000 }}{% endfor %}",
                    "template output passes 1e+06 characters; the limit is 1e+06 characters of template "
                    "output; raise it with LINGDIAG_TEMPLATE_MAX_CHARS=N"),
}


CONVERSATIONS = (
    (ChatMessage("user", "Premise: Ann was baking a cake. Hypothesis: Ann baked a cake. True?"),),
    (ChatMessage("system", "You are a strict logician."), ChatMessage("user", "Is it true?  ")),
    (ChatMessage("system", "S"), ChatMessage("user", "U1"), ChatMessage("assistant", "True"),
     ChatMessage("user", "U2 <|im_end|> \"quoted\" ünïcödé\n")),
)


@pytest.mark.parametrize("template", [None, QWEN3_LIKE_TEMPLATE, REFUSING], ids=["smollm2", "thinking", "refusing"])
def test_well_formed_templates_render_byte_identically(tmp_path_factory: pytest.TempPathFactory,
                                                       template: str | None) -> None:
    directory = str(smollm2_with_template(tmp_path_factory, template))
    plain, bounded = LoadedModel(directory, resolve()), LoadedModel(directory, resolve(), bounded_template=True)
    for messages in CONVERSATIONS:
        for thinking in (None, "off", "on") if template == QWEN3_LIKE_TEMPLATE else (None,):
            request = GenerationRequest(messages=messages, thinking=Thinking.parse(thinking) if thinking else None)
            expected = plain.rendered(request)
            assert bounded.rendered(request) == expected
            # The refusal (raise_exception) still reaches the system-turn fallback.
            assert (expected[1] == "plain-fallback") == (template == REFUSING and messages[0].role == "system")


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_chat_template_stops_the_run_with_one_line(name: str, fake_api: Any,
                                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    template, bound = HOSTILE[name]
    directory = smollm2_with_template(tmp_path_factory, template)
    out = tmp_path_factory.mktemp("run") / "out"
    env = {**os.environ, "LINGDIAG_TEMPLATE_SECONDS": "2"}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "lingdiag", "run", "imperfective", "-m",
                           f"openai:smollm2@{fake_api.url}", "--model-option", f"tokenizer={directory}",
                           "--limit", "1", "--strategy", "zero-shot", "--scoring", "loglik", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.monotonic() - start
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert str(directory) in line and bound in line, line
    assert elapsed < 60  # the process's start and imports included; the template itself stops within 2 s
