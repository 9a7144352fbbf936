"""Frozen records, one per pipeline stage.

``Item`` (dataset) → ``GenerationRequest``/``LoglikelihoodRequest`` (prompt) →
``Generation``/``LogLikelihood`` (model) → ``Prediction`` (parse) → ``ItemRecord`` (scored,
written once to ``items.jsonl``) → ``ResultRow`` (one condition's metrics, as tables, figures
and analyses read them). Stages build new records and never mutate earlier ones.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from lingdiag.scoring import LINGDIAG, ScoringPolicy
from lingdiag.thinking import Thinking

UNPARSED = "unparsed"
"""The label recorded when a model answer cannot be parsed; counted, never mapped to a label."""
UNFINISHED = "unfinished"
"""The label recorded when a model's thinking never closed (cut by its token cap): there is no
answer to parse, and the trace is never read as one; counted apart from ``UNPARSED``."""
LANGUAGE = "language"
"""The item tag naming an item's language: accuracy per language, aligned translations compared."""
UNPARSED_REASON = "unparsed"
"""The detail key of an unparsed answer's reason: why the reader refused it (``lingdiag.parse.reader
.REASONS``, or a suite's own parser's name for it). Kept where a judge then read the answer."""
JUDGE = "judge"
"""The detail key of a judge model's reading of an answer (``--reader judge:SPEC``): its ``label``
(or ``unparsed``), ``model`` and ``reply``."""
JUDGED = "judged"
"""The detail key, true where a record's label is the judge's: the rules left the answer unparsed."""


@dataclass(frozen=True, slots=True)
class Item:
    """One diagnostic example, as loaded from a dataset."""

    id: str
    """Stable identifier, unique within its dataset."""
    fields: Mapping[str, Any]
    """The text the prompt is built from (premise, hypothesis, sentences, ...)."""
    gold: str | None
    """Gold label in the suite's label vocabulary; None where the item has none."""
    tags: Mapping[str, Any] = field(default_factory=dict)
    """Breakdown keys for metrics (group, verb_class, construction, ...)."""


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn of a chat prompt."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Constraint:
    """Restricts a generation to valid answers (constrained decoding)."""

    kind: Literal["choice", "regex", "json_schema"]
    """``choice``: exactly one of ``choices``; ``regex``: matches ``pattern``; ``json_schema``: ``schema``."""
    choices: tuple[str, ...] = ()
    pattern: str = ""
    schema: str = ""
    sample_seed: int | None = None
    """None: the best valid token (greedy). Else sample among the valid tokens by their
    probabilities, seeded by this and the prompt: what outlines 0.0.46's ``generate.choice`` did
    (unseeded) for ExpliCa's open models."""


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampled instead of greedy decoding: each token drawn at ``temperature``, seeded so that the
    same request gives the same text (a backend that cannot sample does not serve it:
    ``Capabilities.sampling``).
    """

    temperature: float
    seed: int = 0


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """Generation from chat messages (``messages``) or raw text (``prompt``): greedy unless ``sampling``."""

    messages: tuple[ChatMessage, ...] = ()
    """Chat turns; the backend applies the model's chat template."""
    prompt: str | None = None
    """Raw text prompt, used verbatim when ``messages`` is empty."""
    max_new_tokens: int = 512
    stop: tuple[str, ...] = ()
    """Generation ends at the first of these strings, which is not part of the text."""
    constraint: Constraint | None = None
    thinking: Thinking | None = None
    """The thinking setting (``--thinking``); None: the model's own default, nothing asked.
    ``max_new_tokens`` is then the answer's budget, the thinking's is ``thinking.budget``."""
    sampling: Sampling | None = None
    """Sampled decoding (an axis such as a temperature sweep sets it); None: greedy."""

    def __post_init__(self) -> None:
        if bool(self.messages) == (self.prompt is not None):
            raise ValueError("GenerationRequest needs exactly one of messages or prompt")

    def key(self) -> dict[str, Any]:
        """A JSON-able description of the whole request (for caches and records)."""
        key = {"kind": "generate", **asdict(self)}
        if key["constraint"] is not None and key["constraint"]["sample_seed"] is None:
            del key["constraint"]["sample_seed"]  # greedy keys stay as they were before sampling existed
        if self.thinking is None:
            del key["thinking"]  # keys stay as they were before thinking settings existed
        else:
            key["thinking"] = self.thinking.recorded()
        if self.sampling is None:
            del key["sampling"]  # greedy keys stay as they were before sampling existed
        return key


@dataclass(frozen=True, slots=True)
class LoglikelihoodRequest:
    """Log-probability of ``continuation`` given ``context``.

    Following lm-eval's convention, a separating space belongs to the continuation
    (``context="The cat", continuation=" sat"``). An empty context scores the whole text
    from the start of the sequence (the backend supplies BOS where the model has one).

    With ``messages`` the context is a chat conversation instead, rendered exactly as a
    ``GenerationRequest`` with the same messages is (chat template, assistant turn opened), and
    ``context`` must be empty: the continuation is scored as the first words of the answer,
    so competence (log-likelihood) and performance (generation) see the same prompt tokens.

    ``policy`` says what precedes a text context and which tokens count (``lingdiag.scoring``);
    it does not apply to a chat context, whose tokens the chat template decides.
    """

    context: str
    continuation: str
    messages: tuple[ChatMessage, ...] = ()
    """Chat turns to render as the context (the backend applies the model's chat template)."""
    policy: ScoringPolicy = LINGDIAG
    """The scoring convention (what precedes the text, leading space, first token)."""
    per_token: bool = False
    """Also return each scored token's log-prob and character span (``LogLikelihood.token_*``)."""
    assistant_prefix: str = ""
    """Text the assistant turn starts with, after the opened turn and before the continuation (which
    alone is scored): the model's own thinking replayed (``lingdiag.conditions.after_thinking``).
    Only with ``messages``."""
    thinking: Thinking | None = None
    """The thinking setting the chat template is rendered with (the replayed generation's, so the
    context is the prompt that generation read); None: the template's default. Only with ``messages``."""

    def __post_init__(self) -> None:
        if self.messages and self.context:
            raise ValueError("LoglikelihoodRequest takes a text context or chat messages, not both")
        if (self.assistant_prefix or self.thinking is not None) and not self.messages:
            raise ValueError("LoglikelihoodRequest: an assistant prefix or a thinking setting needs chat messages")

    def key(self) -> dict[str, Any]:
        """A JSON-able description of the whole request (for caches and records)."""
        key = {"kind": "loglikelihood", **asdict(self)}
        if not key["messages"]:
            del key["messages"]  # text-context keys stay as they were before chat contexts existed
        # Keys of default requests stay as they were before policies and per-token answers existed.
        if self.policy == LINGDIAG:
            del key["policy"]
        else:
            key["policy"] = self.policy.recorded()
        if not self.per_token:
            del key["per_token"]
        # Keys of requests that replay no thinking stay as they were before replays existed.
        if not self.assistant_prefix:
            del key["assistant_prefix"]
        if self.thinking is None:
            del key["thinking"]
        else:
            key["thinking"] = self.thinking.recorded()
        return key


Request = GenerationRequest | LoglikelihoodRequest


@dataclass(frozen=True, slots=True)
class Generation:
    """A backend's answer to a ``GenerationRequest``."""

    text: str
    """Generated text, stop string removed."""
    n_tokens: int = 0
    """Number of generated tokens."""
    prompt_tokens: int = 0
    logprobs: tuple[float, ...] | None = None
    """Log-probability of each generated token, where the backend reports them."""
    error: str | None = None
    """Set when the request failed after retries; ``text`` is then empty."""
    rendering: str | None = None
    """How the chat turns became the prompt when not by the model's chat template as given:
    ``plain-fallback`` (the template refused the system turn; plain ``system + blank line + user``)
    or ``folded`` (the system turn folded into the first user turn); None otherwise."""
    reasoning: str | None = None
    """The model's thinking, apart from its answer (``text``); None where it showed none."""
    reasoning_tokens: int | None = None
    """Tokens the thinking took, where known (hosted models that hide their thinking report its
    length alone); where it was cut for an ``unfinished`` generation."""
    unfinished: bool = False
    """The thinking never closed (cut by its token cap): there is no answer (``text`` is empty)."""
    rendered_prompt: str | None = None
    """Under a thinking setting (transformers backend), the exact text the answer was generated
    from: the rendered prompt, and after a thinking phase the opened block, the trace and the
    closing tag (budget forcing's own where it closed the block); unfinished, the prompt the
    thinking followed. None otherwise, so other records stay as they were."""


@dataclass(frozen=True, slots=True)
class LogLikelihood:
    """A backend's answer to a ``LoglikelihoodRequest``."""

    logprob: float
    """Summed natural-log probability of the continuation tokens."""
    n_tokens: int
    """Number of continuation tokens."""
    is_greedy: bool
    """Whether greedy decoding from the context would produce exactly the continuation."""
    error: str | None = None
    token_logprobs: tuple[float, ...] | None = None
    """Natural-log probability of each scored token (a ``per_token`` request)."""
    token_spans: tuple[tuple[int, int], ...] | None = None
    """Each scored token's ``[start, end)`` characters in the continuation as requested (a space
    the policy put before it starts at -1)."""
    word_start_logprobs: tuple[float, ...] | None = None
    """With the policy's whitespace correction: at each scored token's position and once after
    the last, the log-probability that the next token starts a word (begins with a space)."""


Response = Generation | LogLikelihood


def response_to_json(r: Response) -> dict[str, Any]:
    """Serialise a response (for the cache)."""
    kind = "generation" if isinstance(r, Generation) else "loglikelihood"
    body = asdict(r)
    for optional in ("rendering", "token_logprobs", "token_spans", "word_start_logprobs", "reasoning",
                     "reasoning_tokens", "rendered_prompt"):
        if optional in body and body[optional] is None:
            del body[optional]  # entries stay as they were before the field existed
    if body.get("unfinished") is False:
        del body["unfinished"]
    return {"type": kind, **body}


_FIELD_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "generation": {"text": (str,), "n_tokens": (int,), "prompt_tokens": (int,), "logprobs": (list, type(None)),
                   "error": (str, type(None)), "rendering": (str, type(None)), "reasoning": (str, type(None)),
                   "reasoning_tokens": (int, type(None)), "unfinished": (bool,),
                   "rendered_prompt": (str, type(None))},
    "loglikelihood": {"logprob": (int, float), "n_tokens": (int,), "is_greedy": (bool,), "error": (str, type(None)),
                      "token_logprobs": (list, type(None)), "token_spans": (list, type(None)),
                      "word_start_logprobs": (list, type(None))},
}


def _numbers(kind: str, name: str, values: Any) -> tuple[float, ...]:
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{kind} field {name!r} holds a non-number")
    return tuple(values)


def nonfinite(value: Any, where: str = "") -> str | None:
    """Where ``value`` (a response, a prediction's detail, or any nest of them) holds a NaN or an
    infinity, as ``"logprob = nan"``; None when every number is finite.

    The one test of "is this score a number": a NaN compares false both ways, so left in it
    hands a pair to whichever sentence a comparison favours by default (the expected one, under
    BLiMP's rule) and reports a broken model as perfect. ``run`` makes such an item failed and
    the cache never stores nor serves such a response.
    """
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where or 'value'} = {value}"
    if isinstance(value, Generation | LogLikelihood):
        value = asdict(value)
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = nonfinite(v, str(k) if not where else f"{where}.{k}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for k, v in enumerate(value):
            found = nonfinite(v, f"{where}[{k}]")
            if found:
                return found
    return None


def response_from_json(d: Mapping[str, Any]) -> Response:
    """Inverse of :func:`response_to_json`.

    Raises:
        ValueError: ``d`` is not a response of the right shape (e.g. a list for ``text``) or
            holds a NaN or infinity: a stored value is untrusted, and a wrong type would fail
            far away, in a parser.
    """
    kind = d.get("type")
    types = _FIELD_TYPES.get(kind) if isinstance(kind, str) else None
    body = {k: v for k, v in d.items() if k != "type"}
    if types is None or not set(body) <= set(types):
        raise ValueError(f"not a response: type {kind!r}, fields {sorted(body)}")
    bad = nonfinite(body)
    if bad:
        raise ValueError(f"{kind} holds a non-finite number ({bad})")
    for name, value in body.items():
        if not isinstance(value, types[name]) or (isinstance(value, bool) and bool not in types[name]):
            raise ValueError(f"{kind} field {name!r} is {type(value).__name__}, not {types[name][0].__name__}")
    if kind == "generation":
        if body.get("logprobs") is not None:
            body["logprobs"] = _numbers(kind, "logprobs", body["logprobs"])
        return Generation(**body)
    for field_name in ("token_logprobs", "word_start_logprobs"):
        if body.get(field_name) is not None:
            body[field_name] = _numbers("loglikelihood", field_name, body[field_name])
    if body.get("token_spans") is not None:
        spans = body["token_spans"]
        if not all(isinstance(s, list) and len(s) == 2 and all(type(v) is int for v in s) for s in spans):
            raise ValueError("loglikelihood field 'token_spans' holds something other than [start, end] pairs")
        body["token_spans"] = tuple((a, b) for a, b in spans)
    return LogLikelihood(**body)


@dataclass(frozen=True, slots=True)
class Prediction:
    """A parsed model answer."""

    label: str
    """A label of the suite's vocabulary, or ``UNPARSED``."""
    detail: Mapping[str, Any] = field(default_factory=dict)
    """Extra parsed values (a rating, per-option scores, the reasoning text, ...)."""


@dataclass(frozen=True, slots=True)
class TextOutput:
    """A generation as a record keeps it: its answer, and what came with it where anything did."""

    text: str
    rendering: str | None = None
    """How the chat turns became the prompt, where not by the template as given (``Generation.rendering``)."""
    reasoning: str | None = None
    """The thinking, apart from the answer; None where the model showed none."""
    reasoning_tokens: int | None = None
    unfinished: bool | None = None
    """True where the thinking never closed (absent otherwise, as written)."""
    rendered_prompt: str | None = None

    @property
    def thought(self) -> bool:
        """Whether the generation carries thinking (its text, or only its length where a server hid it)."""
        return self.reasoning is not None or self.reasoning_tokens is not None

    def to_json(self) -> str | dict[str, Any]:
        """Plain text where nothing came with the answer, so records without thinking stay as they were."""
        extra = {k: v for k, v in (("rendering", self.rendering), ("reasoning", self.reasoning),
                                   ("reasoning_tokens", self.reasoning_tokens), ("unfinished", self.unfinished),
                                   ("rendered_prompt", self.rendered_prompt)) if v is not None}
        return {"text": self.text, **extra} if extra else self.text


@dataclass(frozen=True, slots=True)
class FailedOutput:
    """A generation request that failed after retries: the backend's error."""

    error: str

    def to_json(self) -> dict[str, Any]:
        """``{"error": ...}``."""
        return {"error": self.error}


@dataclass(frozen=True, slots=True)
class ScoreOutput:
    """A log-likelihood as a record keeps it (None where the number was not finite, written null)."""

    logprob: float | None
    n_tokens: int | None
    is_greedy: bool | None
    token_logprobs: tuple[float, ...] | None = None
    """Each scored token's log-prob, under ``--per-token`` only (the viewer's surprisal)."""
    token_spans: tuple[tuple[int, int], ...] | None = None
    """Each scored token's ``(start, end)`` characters in the continuation, beside ``token_logprobs``."""

    def to_json(self) -> dict[str, Any]:
        """All three keys, always; the per-token ones where the run asked for them."""
        out: dict[str, Any] = {"logprob": self.logprob, "n_tokens": self.n_tokens, "is_greedy": self.is_greedy}
        if self.token_logprobs is not None and self.token_spans is not None:
            out |= {"token_logprobs": list(self.token_logprobs), "token_spans": [list(s) for s in self.token_spans]}
        return out


Output = TextOutput | FailedOutput | ScoreOutput
"""One response of an ``ItemRecord``, typed by what answered it."""

_TEXT_KEYS = {"text": str, "rendering": str, "reasoning": str, "reasoning_tokens": int, "unfinished": bool,
              "rendered_prompt": str}
_SCORE_KEYS = {"logprob": float | int, "n_tokens": int, "is_greedy": bool, "token_logprobs": list, "token_spans": list}
_SCORE_BASE = frozenset(("logprob", "n_tokens", "is_greedy"))
"""The keys of a log-likelihood output without per-token log-probs."""


def _score_output(value: dict[str, Any]) -> ScoreOutput:
    lps, spans = value.get("token_logprobs"), value.get("token_spans")
    if (lps is None) != (spans is None):
        raise ValueError("'token_logprobs' without 'token_spans' or the reverse")
    if lps is None or spans is None:
        return ScoreOutput(value["logprob"], value.get("n_tokens"), value.get("is_greedy"))
    try:
        per_token = tuple(float(v) for v in lps), tuple((int(a), int(b)) for a, b in spans)
    except (TypeError, ValueError):
        raise ValueError("'token_logprobs' or 'token_spans' not numbers and pairs") from None
    if len(per_token[0]) != len(per_token[1]):
        raise ValueError("'token_logprobs' and 'token_spans' differ in length")
    return ScoreOutput(value["logprob"], value.get("n_tokens"), value.get("is_greedy"), *per_token)


def output_from_json(value: Any) -> Output:
    """One element of ``outputs`` as ``items.jsonl`` holds it, typed.

    Raises:
        ValueError: not a shape lingdiag writes (naming the key).
    """
    if isinstance(value, Output):
        return value
    if isinstance(value, str):
        return TextOutput(value)
    if isinstance(value, dict) and value.keys() == _SCORE_BASE:  # a log-likelihood, the common case: checked at once
        lp, n, greedy = value["logprob"], value["n_tokens"], value["is_greedy"]
        if (lp is None or type(lp) in (float, int)) and (n is None or type(n) is int) and \
                (greedy is None or type(greedy) is bool):
            return ScoreOutput(lp, n, greedy)
    if not isinstance(value, dict):
        raise ValueError(f"{type(value).__name__}, not a text or an object")
    if set(value) == {"error"} and isinstance(value["error"], str):
        return FailedOutput(value["error"])
    keys = _SCORE_KEYS if "logprob" in value else _TEXT_KEYS
    for k, v in value.items():
        if k not in keys:
            raise ValueError(f"unknown key {k!r}")
        if v is not None and (not isinstance(v, keys[k]) or isinstance(v, bool) is not (keys[k] is bool)):
            raise ValueError(f"key {k!r}: {type(v).__name__} {v!r:.40}")
    if keys is _SCORE_KEYS:
        return _score_output(value)
    if not isinstance(value.get("text"), str):
        raise ValueError("no 'text'")
    return TextOutput(**value)


@dataclass(frozen=True, slots=True)
class ItemRecord:
    """One line of ``items.jsonl``: one item under one condition, scored."""

    condition: str
    """Condition name, e.g. ``zero-shot`` or ``rating/1-shot/greedy``."""
    axes: Mapping[str, str]
    """The condition's axis values, e.g. ``{"strategy": "zero-shot"}``."""
    item_id: str
    tags: Mapping[str, Any]
    fields: Mapping[str, Any]
    prompts: list[Any]
    """Every request sent for this item, in full (messages or raw text)."""
    outputs: list[Output]
    """Every response, typed by what answered it (given as ``items.jsonl`` holds them, they are read
    into their typed form): a generation's text and what came with it, a failed request's error, or
    a log-likelihood."""
    label: str
    """Predicted label or ``UNPARSED``."""
    detail: Mapping[str, Any]
    gold: str | None
    correct: bool | None
    """None when the item has no gold label."""
    error: str | None = None
    """Backend error text when a request of this item failed; the item is retried on resume."""
    decision: Mapping[str, Any] | None = None
    """In a reduced-precision run, a log-likelihood decision's margin, noise bound, ``fragile`` and
    ``rescored`` (``lingdiag.metrics.fragile.Decision``); absent otherwise."""
    replays: Mapping[str, str] | None = None
    """Under ``--after-thinking``, the generation whose thinking this item's scoring replayed
    (``Replayed.recorded()``: ``run``, ``condition``, ``item_id``); absent otherwise."""

    def __post_init__(self) -> None:
        typed = []
        for n, output in enumerate(self.outputs):
            try:
                typed.append(output_from_json(output))
            except ValueError as e:
                raise ValueError(f"field 'outputs.{n}': {e}") from None
        object.__setattr__(self, "outputs", typed)

    def to_json(self) -> str:
        """One deterministic JSON line (sorted keys, no timestamps; no ``decision`` or ``replays`` key
        when there is none, so records of other runs stay as they were before these existed).
        """
        body = asdict(self)
        body["outputs"] = [o.to_json() for o in self.outputs]
        for optional in ("decision", "replays"):
            if body[optional] is None:
                del body[optional]
        return dumps(body, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> ItemRecord:
        """Parse a line of ``items.jsonl``."""
        return cls(**json.loads(line))


REQUEST_SEPARATOR = "\n\n---\n\n"
"""Between the requests (or responses) of one record when they are shown as one text."""


def as_text(value: Any) -> str:
    """One prompt or output of a record (``ItemRecord.prompts``/``outputs``) as plain text.

    Chat turns are ``[role]`` blocks; a log-likelihood request shows its context and the
    continuation scored; a log-likelihood answer its log-prob and token count; a failed
    request its error; a generation its thinking (:func:`thinking_text`) before the answer and
    its rendering, where not the template's as given. Anything else is JSON. Reports, the item
    browser and ``lingdiag.load`` all read records through this.
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, TextOutput):
        thinking = thinking_text(value)
        rendering = f"\n\n[rendering]\n{value.rendering}" if value.rendering else ""
        return (f"{thinking}\n\n[answer]\n" if thinking else "") + value.text + rendering
    if isinstance(value, FailedOutput):
        return f"[error]\n{value.error}"
    if isinstance(value, ScoreOutput):
        greedy = "" if value.is_greedy is None else ", greedy" if value.is_greedy else ", not greedy"
        return f"log-prob {value.logprob} over {value.n_tokens} token(s){greedy}"
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        return "\n\n".join(f"[{m['role']}]\n{m.get('content', '')}" for m in value)
    if isinstance(value, dict) and "continuation" in value:
        head = as_text(value["messages"]) if "messages" in value else str(value.get("context", ""))
        if value.get("assistant_prefix"):
            head += f"\n\n[assistant, replayed]\n{value['assistant_prefix']}".rstrip("\n")
        return (f"{head}\n\n" if head else "") + f"[continuation]\n{value['continuation']}"
    if isinstance(value, dict):  # an output as items.jsonl holds it
        try:
            return as_text(output_from_json(value))
        except ValueError:
            pass
    return json.dumps(value, indent=2, ensure_ascii=False)


def thinking_text(output: TextOutput) -> str:
    """A generation's thinking under its header (``[thinking, N tokens, unfinished]``); empty where it
    thought none. The one rendering of it: records as text and the report's item browser show this.
    """
    if not output.thought:
        return ""
    tokens = output.reasoning_tokens
    head = "[thinking" + (f", {tokens} tokens" if tokens is not None else "") \
        + (", unfinished" if output.unfinished else "") + "]"
    return f"{head}\n{output.reasoning or '(hidden by the server)'}"


def thought(output: Output) -> bool:
    """Whether one output of a record (``ItemRecord.outputs``) carries thinking."""
    return isinstance(output, TextOutput) and output.thought


def record_text(values: list[Any]) -> str:
    """Every prompt (or every output) of one record as one text."""
    return REQUEST_SEPARATOR.join(as_text(v) for v in values)


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One condition of one run with its metrics: what tables, figures and analyses read."""

    model: str
    """The model's display name (``meta.json`` ``model.model``)."""
    condition: str
    """Condition name, e.g. ``zero-shot`` or ``exp1/zero/variation-2``."""
    axes: Mapping[str, str]
    """The condition's axis values; tables group and order by these, never by parsing names."""
    metrics: Mapping[str, Any]
    """The suite's metrics of this condition plus the counts every condition has (``n``, ...)."""
    run: str = ""
    """The run directory the row was read from (empty for rows built in memory)."""
    dataset: str = ""
    """The dataset spec of the run (``builtin``, ``official`` or a path)."""
    n_params: float | None = None
    """The model's parameter count where the backend recorded one."""


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` for files and ``--json`` output: strict JSON, an undefined number
    (NaN, infinity: a rate over no item) written as null.
    """
    return json.dumps(_finite(value), allow_nan=False, **kwargs)


def unparsed_reason(record: ItemRecord) -> str | None:
    """Why ``record``'s answer is unparsed (None: it has a label, or failed).

    The reader's reason (``detail["unparsed"]``); for a record written before reasons were named,
    the rule its parser named (``no-label``, ``negated-label``…); else ``not named``.
    """
    if record.label != UNPARSED or record.error is not None:
        return None
    reason = record.detail.get(UNPARSED_REASON, record.detail.get("rule"))
    return reason if isinstance(reason, str) and reason else "not named"
