"""The OpenAI-compatible backend: OpenAI's API and any server that speaks it.

``openai:<model>`` talks to api.openai.com with the key in ``OPENAI_API_KEY``;
``openai:<model>@<base_url>`` talks to any compatible server (vLLM, SGLang, llama.cpp,
TGI), sending a key only when the ``api_key_env`` option names a variable, so an OpenAI
key never travels to a third-party host. Keys live in one request header and are
redacted from every error message; they never reach records, logs or ``meta.json``.

Chat requests go to ``/chat/completions`` and raw prompts to ``/completions``, greedy
(temperature 0, a fixed seed). Log-likelihoods come from ``/completions`` with
``echo`` + ``logprobs``; because servers get echo log-probs wrong (llama-cpp-python 0.3.36
shifts them by one token for models without BOS), the backend checks them once before
the first log-likelihood request and refuses with a ``CapabilityError`` saying what it
found when they disagree with generation log-probs. Chat-context log-likelihoods need the
served model's tokenizer (``tokenizer`` option): its chat template renders the messages here,
exactly as the transformers backend renders them, and the rendered text is scored with echo
(checked on rendered probes, apart from raw text). Constraints go through the server's
structured output (``structured_output`` option). HTTP, retries and counters live in
``client``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from lingdiag.config import TRANSPORT_MARK, answer_options
from lingdiag.errors import CapabilityError, ConfigError
from lingdiag.model_spec import OPENAI_URL
from lingdiag.models.base import Capabilities, cut_at_stop
from lingdiag.records import (
    ChatMessage,
    Constraint,
    Generation,
    GenerationRequest,
    LogLikelihood,
    LoglikelihoodRequest,
)
from lingdiag.scoring import AUTO
from lingdiag.thinking import Thinking, replay

if TYPE_CHECKING:
    from lingdiag.models.hf.load import LoadedModel
    from lingdiag.models.openai.client import ApiClient, ApiFailure

OPENAI_COMPLETION_MODELS = ("gpt-3.5-turbo-instruct", "davinci-002", "babbage-002")
"""OpenAI models served by ``/completions``; every other OpenAI model is chat-only."""
MAX_STOP = 4
"""OpenAI accepts at most four stop strings; the rest are applied to the returned text."""
PROBES = ("The capital of France is", "One, two, three, four,", "Once upon a time")
"""Prompts for the prompt-log-prob check (the first with a usable continuation is used)."""
EchoForm = Literal["raw", "chat"]
"""What the echoed text is: raw text, or chat messages rendered with the model's template. Each
is checked on its own: llama-cpp-python shifts echo log-probs of text without a leading BOS, and
chat templates such as SmolLM2's write one, so a server can score the one right and the other wrong."""
_SECRET_PATTERNS = (re.compile(r"sk-[A-Za-z0-9_\-*]{6,}"), re.compile(r"(?i)bearer\s+\S+"))


class OpenAIOptions(BaseModel):
    """Options of the ``openai:`` provider (``--model-option key=value`` on the command line). Fields marked
    ``TRANSPORT_MARK`` (timeouts, retries, concurrency, where the key is read from) change how answers are
    fetched, never what they are: a run may change them between attempts; every other one is the run's.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_key_env: str | None = Field(default=None, json_schema_extra=TRANSPORT_MARK)
    """Environment variable holding the key; default ``OPENAI_API_KEY`` for api.openai.com, none elsewhere."""
    concurrency: int = Field(default=8, ge=1, json_schema_extra=TRANSPORT_MARK)
    """Requests in flight at once (raise it for vLLM/SGLang servers with large batches)."""
    timeout: float = Field(default=120.0, gt=0, json_schema_extra=TRANSPORT_MARK)
    """Seconds without an answer before an attempt is retried."""
    connect_timeout: float = Field(default=10.0, gt=0, json_schema_extra=TRANSPORT_MARK)
    deadline: float = Field(default=600.0, gt=0, json_schema_extra=TRANSPORT_MARK)
    """Seconds one attempt may take in all, however steadily the server trickles bytes."""
    max_response_bytes: int = Field(default=64 * 2**20, ge=1024, json_schema_extra=TRANSPORT_MARK)
    """Bytes one answer may have (an API answer is kilobytes); a longer one is a failed attempt."""
    max_retries: int = Field(default=6, ge=0, json_schema_extra=TRANSPORT_MARK)
    backoff: float = Field(default=1.0, ge=0, json_schema_extra=TRANSPORT_MARK)
    """First retry wait in seconds, doubled per retry (with jitter)."""
    max_backoff: float = Field(default=60.0, ge=0, json_schema_extra=TRANSPORT_MARK)
    """Cap on a retry wait, including a server's ``Retry-After``."""
    seed: int | None = 0
    """Sent with every request where servers take one (a sampled request sends its own); None leaves it
    out. A run passes its ``--seed`` here unless ``--model-option seed=`` says otherwise."""
    logprobs: bool = True
    """Ask for generated-token log-probs (some reasoning models refuse them)."""
    structured_output: Literal["json_schema", "gbnf", "none"] = "json_schema"
    """How constraints are sent: ``json_schema`` (``response_format``, OpenAI, vLLM, SGLang,
    llama.cpp chat), ``gbnf`` (llama.cpp grammars), or ``none`` (constrained requests unsupported)."""
    completions: bool | None = None
    """Whether ``/completions`` exists (raw prompts, log-likelihoods); default: yes except for
    OpenAI's chat-only models."""
    verify_prompt_logprobs: bool = True
    """Check echo log-probs against generation log-probs before the first log-likelihood request."""
    prompt_logprob_tolerance: float = Field(default=0.1, gt=0)
    """Largest per-token difference (nat) the check accepts."""
    bos_text: str | None = None
    """Text of the model's start token, scored as the context of empty-context requests."""
    tokenizer: str | None = None
    """Hub id or directory of the served model's tokenizer (the ``hf`` extra reads it). Its chat
    template renders chat-context log-likelihood requests (``--scoring loglik``) as the transformers
    backend renders them; without it they are refused. Named in the identity (so cache keys) when set."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    """Name of the chat length limit; default ``max_completion_tokens`` on OpenAI, else ``max_tokens``."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Merged into every request body; a null value removes a field (e.g. ``{"temperature": null}``)."""


def has_completions(model: str, base_url: str, options: OpenAIOptions) -> bool:
    """Whether the server has ``/completions`` (raw prompts, log-likelihoods): as the option says, else
    every server but OpenAI's own, where only its completion models have it.
    """
    if options.completions is not None:
        return options.completions
    return urlsplit(base_url).hostname != "api.openai.com" or model.startswith(OPENAI_COMPLETION_MODELS)


def capabilities(model: str, base_url: str, options: OpenAIOptions) -> Capabilities:
    """What an OpenAI-compatible backend serves, declared without a request: generation, sampled by the
    server (seeded) and with thinking settings; log-likelihoods where ``/completions`` exists (their
    prompt log-probs are checked at first use); constraints unless ``structured_output=none``.
    """
    return Capabilities(generate=True, loglikelihood=has_completions(model, base_url, options),
                        constrained=options.structured_output != "none", sampling=True, thinking=True)


def _redactor(secret: str | None, patterns: bool = True) -> Callable[[str], str]:
    """A function removing ``secret`` and (with ``patterns``) anything shaped like an API key or bearer token."""

    def redact(text: str) -> str:
        if secret:
            text = text.replace(secret, "***")
        for pattern in _SECRET_PATTERNS if patterns else ():
            text = pattern.sub("***", text)
        return text

    return redact


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _wrapped(value_schema: dict[str, Any]) -> dict[str, Any]:
    # OpenAI's strict mode needs an object at the root: the answer travels as {"answer": ...}.
    return {"type": "object", "properties": {"answer": value_schema}, "required": ["answer"],
            "additionalProperties": False}


@dataclass(frozen=True, slots=True)
class _Call:
    """One HTTP request for one generation request, and how to read its answer."""

    path: str
    body: dict[str, Any]
    chat: bool
    unwrap: bool
    """The answer is ``{"answer": text}`` standing for ``text`` (a wrapped choice or regex)."""


def constraint_fields(constraint: Constraint, dialect: str, chat: bool) -> tuple[dict[str, Any], bool]:
    """Request-body fields that enforce ``constraint`` on a server of the given dialect.

    Args:
        constraint: The request's constraint.
        dialect: ``json_schema`` or ``gbnf`` (see ``OpenAIOptions.structured_output``).
        chat: Whether the request goes to the chat endpoint.

    Returns:
        ``(fields, unwrap)``: body fields, and whether the answer comes wrapped as ``{"answer": ...}``.
    """
    if dialect == "gbnf" and constraint.kind == "choice":
        return {"grammar": "root ::= " + " | ".join(gbnf_literal(c) for c in constraint.choices)}, False
    if constraint.kind == "json_schema":
        schema, unwrap = json.loads(constraint.schema), False
    elif constraint.kind == "choice":
        schema, unwrap = _wrapped({"type": "string", "enum": list(constraint.choices)}), True
    else:
        schema, unwrap = _wrapped({"type": "string", "pattern": constraint.pattern}), True
    if dialect == "gbnf":
        # llama-cpp-python's /completions takes grammars only, and its schema converter
        # ignores "pattern" (it silently falls back to any JSON), so neither can be enforced.
        if not chat or constraint.kind == "regex":
            raise CapabilityError(f"structured_output=gbnf cannot enforce a {constraint.kind} constraint on "
                                  f"{'chat' if chat else 'raw-prompt'} requests; it serves choice constraints, "
                                  "and JSON schemas on chat requests")
        # llama-cpp-python knows only the older "json_object" + schema form of response_format.
        return {"response_format": {"type": "json_object", "schema": schema}}, unwrap
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": "answer", "schema": schema, "strict": True}}}, unwrap


def _unwrap(text: str) -> str:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value["answer"] if isinstance(value, dict) and isinstance(value.get("answer"), str) else text


def satisfies(text: str, constraint: Constraint) -> bool:
    """Whether ``text`` obeys ``constraint`` (a JSON answer must be an object; its schema is not checked)."""
    if constraint.kind == "choice":
        return text in constraint.choices
    if constraint.kind == "regex":
        return re.fullmatch(constraint.pattern, text) is not None
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def _reasoning(message: Any, usage: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """The thinking a chat answer carries apart from its content, and its length in tokens.

    vLLM and SGLang put it in ``message.reasoning`` (older versions: ``reasoning_content``);
    ``usage.completion_tokens_details.reasoning_tokens`` counts it, and is all a hosted model
    that hides its thinking reports. A field holding only whitespace is no thinking: the other
    field is read, else None (``lingdiag.parse.thinking.separate`` decides the rest).
    """
    reasoning = None
    if isinstance(message, Mapping):
        for key in ("reasoning", "reasoning_content"):
            value = message.get(key)
            if isinstance(value, str) and (value.strip() or reasoning is None):
                reasoning = value
                if value.strip():
                    break
    details = usage.get("completion_tokens_details")
    count = details.get("reasoning_tokens") if isinstance(details, Mapping) else None
    tokens = count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
    if tokens == 0 and reasoning is None:
        tokens = None  # servers report 0 for models that never think: nothing to record
    return reasoning, tokens


@dataclass(frozen=True, slots=True)
class _Echo:
    """A log-likelihood request as the text sent with ``echo`` and what of it is scored."""

    text: str
    start: int
    """Tokens ending after this character are scored."""
    skip_first: bool
    """The first of them has nothing before it (no log-prob): not scored."""
    requested: int
    """Where the requested continuation starts in ``text`` (token spans are relative to it)."""
    per_token: bool
    specials: tuple[str, ...] = ()
    """Special-token texts in a rendered chat prompt, longest first (see ``offsets``)."""

    def offsets(self, choice: Mapping[str, Any]) -> tuple[int, int, int]:
        """``start``, the end of ``text`` and ``requested`` in the answer's ``text_offset`` space.

        llama-cpp-python leaves special tokens out of echoed text and offsets (``<|im_start|>``
        is missing, ``<|im_end|>`` is an empty token); vLLM spells them. A special token that no
        echoed token spells is taken out of the count.
        """
        echoed = set((choice.get("logprobs") or {}).get("tokens") or [])
        hidden = [s for s in self.specials if s not in echoed]
        if not hidden:
            return self.start, len(self.text), self.requested

        def width(part: str) -> int:
            for s in hidden:
                part = part.replace(s, "")
            return len(part)

        return width(self.text[:self.start]), width(self.text), width(self.text[:self.requested])


def is_number(value: Any) -> bool:
    """Whether a server's log-prob field holds a number (a text or a boolean is a server fault);
    a NaN is a number here, refused later with every other non-finite score (``run``).
    """
    return isinstance(value, int | float) and not isinstance(value, bool)


EchoToken = tuple[str, float | None, dict[str, float], int]
"""``(token, logprob, top alternatives, character offset)`` of one echoed token."""


def _echo_span(choice: Mapping[str, Any], start: int, end: int) -> list[EchoToken]:
    """The echoed tokens that end after ``start`` and begin before ``end``.

    A token straddling ``start`` counts as part of the span (its probability covers span text).
    """
    lp = choice.get("logprobs") or {}
    tokens, values = lp.get("tokens") or [], lp.get("token_logprobs") or []
    offsets, tops = lp.get("text_offset") or [], lp.get("top_logprobs") or []
    span = []
    for k, (tok, offset) in enumerate(zip(tokens, offsets, strict=False)):
        if offset < end and offset + len(tok) > start:
            top = tops[k] if k < len(tops) and isinstance(tops[k], dict) else {}
            span.append((tok, values[k] if k < len(values) else None, top, int(offset)))
    return span


class OpenAIBackend:
    """A model behind an OpenAI-compatible HTTP API."""

    def __init__(self, model: str, base_url: str = OPENAI_URL, options: OpenAIOptions | None = None) -> None:
        """Prepare the client; the key is read from the environment here and kept only in a header.

        Args:
            model: The model name the server knows.
            base_url: API root including ``/v1``.
            options: Provider options.
        """
        from lingdiag.models.openai.client import ApiClient, RetryPolicy

        self.model, self.base_url = model, base_url
        self.options = opts = options or OpenAIOptions()
        self.hosted = urlsplit(base_url).hostname == "api.openai.com"
        key_env = opts.api_key_env or ("OPENAI_API_KEY" if self.hosted else None)
        key = os.environ.get(key_env) if key_env else None
        if key_env and not key:
            raise ConfigError(f"the API key variable {key_env} is not set (name another with the api_key_env option)")
        self._redact = _redactor(key)
        # Answers lose only the key itself: a pattern would also eat model text ("bearer bonds").
        self._redact_answer = _redactor(key, patterns=False)
        policy = RetryPolicy(timeout=opts.timeout, connect_timeout=opts.connect_timeout, deadline=opts.deadline,
                             max_response_bytes=opts.max_response_bytes,
                             max_retries=opts.max_retries, backoff=opts.backoff, max_backoff=opts.max_backoff)
        self.client: ApiClient = ApiClient(base_url, {"Authorization": f"Bearer {key}"} if key else {},
                                           concurrency=opts.concurrency, policy=policy, redact=self._redact)
        self.completions = has_completions(model, base_url, opts)
        self.max_tokens_field = opts.max_tokens_field or ("max_completion_tokens" if self.hosted else "max_tokens")
        self._violations = 0
        self._verdicts: dict[EchoForm, str] = {} if opts.verify_prompt_logprobs else {"raw": "", "chat": ""}
        """Per form, what the prompt-log-prob check found ("" when nothing is wrong); absent until checked."""
        self._renderer: LoadedModel | None = None
        self._specials: tuple[str, ...] | None = None
        if opts.tokenizer:
            from lingdiag.models.hf.load import LoadedModel
            from lingdiag.models.hf.placement import resolve

            # Only its tokenizer is read (on first use); the weights are never loaded. Its chat
            # template is someone else's code: rendered within the bounds of untrusted templates.
            self._renderer = LoadedModel(opts.tokenizer, resolve(), bounded_template=True)

    @property
    def identity(self) -> dict[str, str]:
        """Backend, model, base URL and every option that may change answers (``answer_options``: those its
        schema does not mark as transport; the seed and the structured output always, the others where set);
        the cache key's model part. No key.
        """
        return {"backend": "openai", "model": self.model, "base_url": self.base_url, "weights_sha256": "",
                **answer_options(self.options, always=("seed", "structured_output"))}

    @property
    def capabilities(self) -> Capabilities:
        """See :func:`capabilities`."""
        return capabilities(self.model, self.base_url, self.options)

    def usage(self) -> dict[str, int]:
        """Counters since the backend was built: requests, retries (by reason), errors, tokens, and
        ``constraint_violations`` (constrained answers that break their constraint: the server
        ignored the structured-output request).
        """
        base = dict.fromkeys(("requests", "retries", "errors", "prompt_tokens", "completion_tokens"), 0)
        return {**base, **self.client.counts, "constraint_violations": self._violations}

    # -- request bodies -------------------------------------------------------------------
    def _body(self, fields: dict[str, Any]) -> dict[str, Any]:
        # A request's own seed (a sampled one's) is the one sent; ``seed`` (the run's) is every other's.
        body = {"model": self.model, "temperature": 0, "seed": self.options.seed, **fields}
        if not self.hosted:
            # llama.cpp servers apply a repetition penalty of 1.1 by default, which makes
            # temperature 0 not greedy; other servers ignore the field or already use 1.0.
            body["repeat_penalty"] = 1.0
        body.update(self.options.extra_body)
        return {k: v for k, v in body.items() if v is not None}

    def _call(self, r: GenerationRequest) -> _Call:
        chat = bool(r.messages)
        fields: dict[str, Any] = {"stop": list(r.stop[:MAX_STOP]) or None}
        if chat:
            fields["messages"] = [{"role": m.role, "content": m.content} for m in r.messages]
            fields[self.max_tokens_field] = r.max_new_tokens
            fields["logprobs"] = True if self.options.logprobs else None
            # llama-cpp-python returns chat log-probs only when top_logprobs is set as well.
            fields["top_logprobs"] = 1 if self.options.logprobs else None
        else:
            fields["prompt"] = r.prompt
            fields["max_tokens"] = r.max_new_tokens
            fields["logprobs"] = 1 if self.options.logprobs else None
        unwrap = False
        if r.constraint is not None:
            extra, unwrap = constraint_fields(r.constraint, self.options.structured_output, chat)
            fields.update(extra)
        if r.thinking is not None:
            fields.update(self._thinking_fields(r, chat))
        if r.sampling is not None:  # the server samples, seeded (servers without seeds cannot repeat a draw)
            fields.update(temperature=r.sampling.temperature, seed=r.sampling.seed)
        return _Call("chat/completions" if chat else "completions", self._body(fields), chat, unwrap)

    def _thinking_fields(self, r: GenerationRequest, chat: bool) -> dict[str, Any]:
        """Body fields asking for ``r.thinking``: the chat template's switch (vLLM, SGLang), the
        effort (OpenAI, gpt-oss servers) and one length cap for thinking and answer together (a
        server cannot be told to close a trace: ``budget:N`` caps it, and the generation is
        ``unfinished`` when the trace used the cap).
        """
        setting = r.thinking
        assert setting is not None
        fields: dict[str, Any] = {}
        if setting.thinks:
            fields[self.max_tokens_field if chat else "max_tokens"] = setting.budget + r.max_new_tokens
        if setting.mode == "effort":
            fields["reasoning_effort"] = setting.effort
        elif not self.hosted and chat:  # OpenAI refuses unknown fields; its models think by effort alone
            fields["chat_template_kwargs"] = {"enable_thinking": setting.thinks}
        elif self.hosted and setting.mode != "off":
            fields["reasoning_effort"] = "medium"
        return fields

    # -- generation -----------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Greedy generations, ``concurrency`` requests in flight; see ``Backend.generate``.

        A request that still fails after retries gets ``Generation.error``; the others are unaffected.
        """
        if not self.completions and any(not r.messages for r in requests):
            raise CapabilityError(f"{self.model} at {self.base_url} is chat-only: raw-prompt requests need "
                                  "/completions (set the completions option if the server has it)")
        if self.options.structured_output == "none" and any(r.constraint for r in requests):
            raise CapabilityError("constrained requests need structured output (structured_output is none)")
        calls = [self._call(r) for r in requests]
        answers = self.client.post_many([(c.path, c.body) for c in calls])
        return [self._generation(r, c, a) for r, c, a in zip(requests, calls, answers, strict=True)]

    def _generation(self, request: GenerationRequest, call: _Call, answer: dict[str, Any] | ApiFailure) -> Generation:
        if not isinstance(answer, dict):
            return Generation(text="", error=answer.message)
        try:
            choice = answer["choices"][0]
            text = choice["message"]["content"] if call.chat else choice["text"]
        except (KeyError, IndexError, TypeError):
            return Generation(text="", error=f"malformed answer from {self.base_url}: no choices[0] text")
        usage: dict[str, Any] = answer["usage"] if isinstance(answer.get("usage"), dict) else {}
        reasoning, reasoning_tokens = _reasoning(choice.get("message") if call.chat else None, usage)
        if text is None and (reasoning is not None or reasoning_tokens is not None):
            text = ""  # all of it went to thinking (the cap came first, or the answer is empty)
        if not isinstance(text, str):
            # A list, number or null in place of text is a server fault: failed (retried by the
            # next run), never parsed nor cached.
            return Generation(text="", error=f"malformed answer from {self.base_url}: its content is not text "
                                             f"but {type(text).__name__}")
        from lingdiag.models.openai.client import token_count

        lp = choice.get("logprobs") or {}
        try:
            values = ([t.get("logprob") for t in lp.get("content") or []] if call.chat
                      else lp.get("token_logprobs") or [])
            if not all(v is None or is_number(v) for v in values):
                raise TypeError
        except (AttributeError, TypeError):
            return Generation(text="", error=f"malformed answer from {self.base_url}: a log-prob is not a number")
        logprobs = tuple(round(float(v), 6) for v in values if v is not None) or None
        # A server echoing the key inside an answer must not put it into records and the cache.
        text = self._redact_answer(cut_at_stop(_unwrap(text) if call.unwrap else text, request.stop))
        if request.constraint is not None and not satisfies(text, request.constraint):
            self._violations += 1
        n_tokens = token_count(usage.get("completion_tokens")) or len(logprobs or ())
        # The cap came before any answer: the thinking never closed.
        unfinished = (reasoning is not None or bool(reasoning_tokens)) and not text.strip() \
            and choice.get("finish_reason") == "length"
        if unfinished and reasoning_tokens is None:
            reasoning_tokens = n_tokens
        return Generation(text=text, n_tokens=n_tokens, prompt_tokens=token_count(usage.get("prompt_tokens")),
                          logprobs=logprobs, reasoning=None if reasoning is None else self._redact_answer(reasoning),
                          reasoning_tokens=reasoning_tokens, unfinished=unfinished)

    # -- log-likelihood -------------------------------------------------------------------
    def _echo_body(self, text: str) -> dict[str, Any]:
        # max_tokens=1: some servers read 0 as "no limit"; the one sampled token is ignored.
        return self._body({"prompt": text, "max_tokens": 1, "echo": True, "logprobs": 1})

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Summed continuation log-probs from echoed prompt log-probs; see ``Backend.loglikelihood``.

        Raises:
            CapabilityError: The server has no ``/completions``, its prompt log-probs failed
                the check, a request has an empty context and no ``bos_text`` is set, or a
                request has a chat context and no ``tokenizer`` is set.
        """
        forms: list[EchoForm] = sorted({"chat" if r.messages else "raw" for r in requests})
        if "chat" in forms and self._renderer is None:
            # The server's chat template is not visible through the API: the text to score must be
            # rendered here, and scoring another template's rendering would score another prompt.
            raise CapabilityError(f"{self.model} at {self.base_url}: log-likelihoods with a chat context need the "
                                  "model's chat template, which the OpenAI-compatible API does not expose: set "
                                  "--model-option tokenizer=<hub id or directory of the served model> to render it "
                                  "here, or use an hf: or embedded model")
        if not self.completions:
            raise CapabilityError(f"{self.model} at {self.base_url} is chat-only: the chat API returns no prompt "
                                  "log-probs, so log-likelihood requests cannot be served")
        for form in forms:
            if form not in self._verdicts:
                failure = self._check_prompt_logprobs(form)
                if failure is not None:  # a transient failure: the verdict is left for the next call
                    return [LogLikelihood(0.0, 0, False, error=f"prompt log-prob check failed: {failure}")
                            for _ in requests]
            if self._verdicts[form]:
                raise CapabilityError(self._verdicts[form])
        spans = [self._echo_text(r) for r in requests]
        answers = self.client.post_many([("completions", self._echo_body(e.text)) for e in spans])
        return [self._loglik(e, a) for e, a in zip(spans, answers, strict=True)]

    def _echo_text(self, r: LoglikelihoodRequest) -> _Echo:
        """The text to echo for ``r`` under its scoring policy, and where its scored part starts."""
        policy = r.policy
        if policy.whitespace_correction:
            raise CapabilityError(f"{self.model} at {self.base_url}: the leading-whitespace correction needs the "
                                  "whole next-token distribution, which echoed log-probs do not carry; use an hf: "
                                  "or embedded model, or a policy without +ws")
        if r.messages:
            # As in the transformers backend, the chat template decides what precedes the
            # continuation (the policy's prefix and leading space do not apply), which follows
            # the rendered prompt's opened assistant turn directly.
            return self._chat_echo(r.messages, r.continuation, r.per_token, r.thinking, r.assistant_prefix)
        continuation = r.continuation
        if policy.leading_space and not r.context.endswith(" ") and not continuation[:1].isspace():
            continuation = " " + continuation
        # A space at the end of the context belongs to the continuation (lm-eval's rule).
        context = r.context.rstrip(" ")
        prefix = ""
        if policy.prefixes(context_empty=not context):
            prefix = self.options.bos_text or "" if policy.prefix == AUTO else policy.prefix
            if not prefix:
                raise CapabilityError("scoring after the model's start token needs its text: set the bos_text "
                                      "option (e.g. '<|endoftext|>')")
        head = prefix + context
        text = head + r.context[len(context):] + continuation
        # Nothing before the text (policy ``none``, empty context): its first token has no log-prob.
        return _Echo(text, len(head), skip_first=not head, requested=len(text) - len(r.continuation),
                     per_token=r.per_token)

    def _chat_echo(self, messages: Sequence[ChatMessage], continuation: str, per_token: bool,
                   thinking: Thinking | None = None, assistant_prefix: str = "") -> _Echo:
        """``continuation`` after ``messages`` rendered by the transformers backend's own
        ``LoadedModel.render`` (under ``thinking``), the assistant turn opened with ``assistant_prefix``
        (replayed thinking, not scored).
        """
        assert self._renderer is not None  # loglikelihood refuses chat contexts without it
        rendered = replay(self._renderer.render(GenerationRequest(messages=tuple(messages), thinking=thinking)),
                          assistant_prefix, thinking)
        specials = tuple(s for s in self._special_texts() if s in rendered)
        return _Echo(rendered + continuation, len(rendered), skip_first=False, requested=len(rendered),
                     per_token=per_token, specials=specials)

    def _special_texts(self) -> tuple[str, ...]:
        """The renderer's special and added token texts, longest first (read once: a tokenizer
        builds its added vocabulary anew on every ``get_added_vocab`` call).
        """
        if self._specials is None:
            assert self._renderer is not None
            tokenizer = self._renderer.tokenizer
            self._specials = tuple(sorted({*tokenizer.all_special_tokens, *tokenizer.get_added_vocab()},
                                          key=lambda s: (-len(s), s)))
        return self._specials

    def _loglik(self, echo: _Echo, answer: dict[str, Any] | ApiFailure) -> LogLikelihood:
        if not isinstance(answer, dict):
            return LogLikelihood(0.0, 0, False, error=answer.message)
        try:
            choice = answer["choices"][0]
            start, end, requested = echo.offsets(choice)
            span = _echo_span(choice, start, end)
        except (KeyError, IndexError, TypeError):
            span, requested = [], echo.requested
        if echo.skip_first:
            span = span[1:]
        if not span or any(lp is None for _, lp, _, _ in span):
            return LogLikelihood(0.0, 0, False, error=f"no prompt log-probs in the echo answer from {self.base_url}")
        if not all(is_number(lp) and all(is_number(v) for v in top.values()) for _, lp, top, _ in span):
            return LogLikelihood(0.0, 0, False,
                                 error=f"malformed echo answer from {self.base_url}: a log-prob is not a number")
        values = [float(lp) for _, lp, _, _ in span if lp is not None]
        greedy = all(lp is not None and (not top or lp >= max(top.values()) - 1e-6) for _, lp, top, _ in span)
        if not echo.per_token:
            return LogLikelihood(logprob=sum(values), n_tokens=len(span), is_greedy=greedy)
        spans = tuple((at - requested, at + len(tok) - requested) for tok, _, _, at in span)
        return LogLikelihood(logprob=sum(values), n_tokens=len(span), is_greedy=greedy,
                             token_logprobs=tuple(values), token_spans=spans)

    def _check_prompt_logprobs(self, form: EchoForm) -> str | None:
        """Compare echoed prompt log-probs with generation log-probs of the same greedy tokens.

        The ``chat`` form probes with each probe rendered as a user turn. Records the verdict for
        ``form`` (a description of any disagreement, "" when none); returns a failure message
        instead when the server could not be asked.
        """
        verdict = "could not check prompt log-probs: no probe prompt gave a usable greedy continuation"
        for question in PROBES:
            probe = self._probe(form, question, "").text
            gen, = self.client.post_many([("completions", self._body(
                {"prompt": probe, "max_tokens": 6, "logprobs": 1}))])
            if not isinstance(gen, dict):
                if gen.retryable:
                    return gen.message
                verdict = f"the server refused a /completions request with log-probs: {gen.message}"
                break
            choice = (gen.get("choices") or [{}])[0]
            text = choice.get("text") or ""
            lp = choice.get("logprobs") or {}
            gen_tokens, gen_lps = lp.get("tokens") or [], lp.get("token_logprobs") or []
            if len(text.strip()) < 2 or len(gen_lps) < 2 or None in gen_lps or "".join(gen_tokens) != text:
                continue
            echo, = self.client.post_many([("completions", self._echo_body(probe + text))])
            if not isinstance(echo, dict):
                if echo.retryable:
                    return echo.message
                verdict = f"the server refused a /completions request with echo=true: {echo.message}"
                break
            choice = (echo.get("choices") or [{}])[0]
            span = _echo_span(choice, *self._probe(form, question, text).offsets(choice)[:2])
            verdict = self._compare(probe, text, gen_tokens, gen_lps, span)
            break
        self._verdicts[form] = verdict
        return None

    def _probe(self, form: EchoForm, question: str, text: str) -> _Echo:
        """A check's echo: ``text`` after ``question``, itself or rendered as a user turn."""
        if form == "chat":
            return self._chat_echo((ChatMessage("user", question),), text, per_token=False)
        return _Echo(question + text, len(question), skip_first=False, requested=len(question), per_token=False)

    def _compare(self, probe: str, text: str, gen_tokens: list[str], gen_lps: list[float],
                 span: list[EchoToken]) -> str:
        """Empty when the echoed span agrees with generation; else what was found."""
        echo_lps = [lp for _, lp, _, _ in span]
        if not span or None in echo_lps:
            return f"{self.base_url} returns no prompt log-probs with echo=true, so log-likelihoods cannot be computed"
        tol = self.options.prompt_logprob_tolerance
        if [t for t, _, _, _ in span] == gen_tokens:
            worst = max(abs(float(e) - g) for e, g in zip(echo_lps, gen_lps, strict=True) if e is not None)
        else:  # tokenised differently on the way back: compare the totals
            worst = abs(sum(float(e) for e in echo_lps if e is not None) - sum(gen_lps)) / len(gen_lps)
        if worst <= tol:
            return ""
        # Greedy tokens are each the top choice where they were generated; finding token k+1
        # on top at echo position k means the rows are shifted by one position.
        shifted = sum(1 for k in range(len(span) - 1)
                      if span[k][2] and max(span[k][2], key=span[k][2].__getitem__) == span[k + 1][0])
        shift_note = (f"; at {shifted} of {len(span) - 1} positions the echo's top token is the *next* token, "
                      "i.e. the rows are shifted by one position (a known llama-cpp-python bug for models "
                      "without a BOS token)") if shifted else ""
        fmt = ", ".join
        return (f"prompt log-probs from {self.base_url} are wrong, so log-likelihood requests are refused: "
                f"the probe {probe!r} + its greedy continuation {text!r} scored "
                f"[{fmt(f'{float(e):.3f}' for e in echo_lps if e is not None)}] with echo=true but "
                f"[{fmt(f'{g:.3f}' for g in gen_lps)}] when generated (largest difference {worst:.2f} nat, "
                f"tolerance {tol}){shift_note}. Serve the model with vLLM or SGLang, or run it in-process; "
                "verify_prompt_logprobs=false skips this check")
