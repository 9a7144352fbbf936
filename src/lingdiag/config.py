"""The one run configuration, validated at the edge (CLI, YAML, or Python), and the
validation of suite and backend options against their declared option models.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from lingdiag.errors import ConfigError, one_line
from lingdiag.io.inline import hold, holds_rows
from lingdiag.model_spec import ModelSpec

OptionsT = TypeVar("OptionsT", bound=BaseModel)

TRANSPORT = ("batch_tokens", "chunk_items")
"""Fields of a run's configuration that change how answers are fetched, never what they are: how many items
go to the backend per call and how requests are grouped into batches. A run may change them between
attempts (``lingdiag.rundir.inputs``); each attempt's are recorded (``meta.json``'s ``attempts``)."""
TRANSPORT_OPTIONS = frozenset({"api_key_env", "backoff", "batch_tokens", "concurrency", "connect_timeout",
                               "deadline", "max_backoff", "max_batch", "max_response_bytes", "max_retries",
                               "threads", "timeout"})
"""The provider options (``model_options``) of the same kind: timeouts, retries, concurrency, threads, batch
sizes, where the key is read from. Every backend's option schema marks these fields with
:data:`TRANSPORT_MARK` and no other (a test holds the marks and this list together); every other option
may change answers and is part of the run's identity (resume, a study's plan, the response cache)."""
TRANSPORT_MARK: dict[str, Any] = {"transport": True}
"""``json_schema_extra`` of an option schema's transport field (``Field(..., json_schema_extra=TRANSPORT_MARK)``)."""
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def answer_config(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded configuration (``RunConfig.recorded()``) without its transport settings: what two runs
    must share to give the same answers (configurations recorded before a field existed compare equal
    to ones with its default).
    """
    kept = {k: v for k, v in recorded.items() if k not in TRANSPORT}
    options = recorded.get("model_options")
    if isinstance(options, Mapping):
        kept["model_options"] = {k: v for k, v in options.items() if k not in TRANSPORT_OPTIONS}
    return kept


def transport_of(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded configuration's transport settings, as ``meta.json``'s ``attempts`` lists each session's."""
    options = recorded.get("model_options")
    given = {k: v for k, v in options.items() if k in TRANSPORT_OPTIONS} if isinstance(options, Mapping) else {}
    return {**{k: recorded.get(k) for k in TRANSPORT}, "model_options": given}


def answer_options(options: BaseModel, always: tuple[str, ...] = ()) -> dict[str, str]:
    """The options of a backend's validated ``options`` that may change answers (every field its schema does
    not mark :data:`TRANSPORT_MARK`), as the backend's identity names them (so the response cache's key and
    ``meta.json``): those in ``always`` whatever their value, the others where not at their default (so
    identities, and cache keys, of runs that leave an option alone stay as they were). Strings as they are,
    mappings and lists as canonical JSON, anything else as ``str``.
    """
    named = {}
    for name, field in type(options).model_fields.items():
        if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("transport"):
            continue
        value = getattr(options, name)
        if name not in always and value == field.get_default(call_default_factory=True):
            continue
        named[name] = value if isinstance(value, str) else (
            json.dumps(value, sort_keys=True, default=str) if isinstance(value, dict | list) else str(value))
    return named


def names_path(value: Any) -> bool:
    """Whether a configuration's ``suite`` or ``dataset`` value names a file or folder (``data/pairs.csv``,
    ``suite.yaml``) rather than a registered name (``builtin``, ``official``, ``blimp``, ``hf:ORG/NAME``,
    an in-memory ``rows:`` table).
    """
    return isinstance(value, str) and not _SCHEME.match(value) and ("/" in value or bool(Path(value).suffix))

MAX_YAML_DEPTH = 64
"""Deepest nesting a config file may have (a run config needs a handful of levels)."""


class _ConfigLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses aliases (``*name``: a few lines of nested aliases expand
    to billions of nodes once the config is dumped) and nesting deeper than ``MAX_YAML_DEPTH``
    (the composer recurses once per level).
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        where = f"line {event.start_mark.line + 1}, column {event.start_mark.column + 1}"
        if isinstance(event, yaml.AliasEvent):
            raise ConfigError(f"{where}: YAML aliases (*{event.anchor}) are not accepted in a config file; "
                              "write the value out")
        if self.depth >= MAX_YAML_DEPTH:
            raise ConfigError(f"{where}: nested more than {MAX_YAML_DEPTH} levels deep")
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def repeated_key(root: yaml.Node) -> tuple[int, str] | None:
    """The first key a mapping of ``root`` gives twice (YAML's loaders keep the last silently,
    dropping the first): its line and what is wrong, or None. Suite files, study files and run
    configs refuse it alike.
    """
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: dict[str, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in keys:
                        return key.start_mark.line + 1, (
                            f"key {key.value!r} given twice in one mapping (first on line {keys[key.value]}); "
                            "a later one would silently replace the first")
                    keys[key.value] = key.start_mark.line + 1
                todo += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            todo += node.value
    return None


def load_config_yaml(path: Path) -> Any:
    """The YAML document in a config file: UTF-8, no aliases, bounded nesting, no key twice in one mapping.

    Raises:
        ConfigError: one line naming the file (and the line where YAML places the fault).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    loader = _ConfigLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        repeated = repeated_key(node)
        if repeated is not None:
            raise ConfigError(f"line {repeated[0]}: {repeated[1]}")
        return loader.construct_document(node)
    except ConfigError as e:
        raise ConfigError(f"{path}, {e}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}{where}: not valid YAML ({e.problem or e.context})") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(e).split())})") from None
    finally:
        loader.dispose()


_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_-]?key|apikey|key|token|access[_-]?token|auth|secret|password|passwd|sig|signature)=)"
    r"[^&#;\s]*")
_USERINFO = re.compile(r"//[^/@\s]*@")


def redact_url_secrets(text: str) -> str:
    """``text`` with URL credentials (``?api_key=``, ``key=``, ``token=``..., ``user:pass@``) made ``***``."""
    return _USERINFO.sub("//***@", _QUERY_SECRET.sub(r"\1***", text))
class Shard(BaseModel):
    """Shard ``index`` of ``count`` (1-based, ``--shard 2/3``): the items whose id hashes to it.

    An item belongs to shard ``sha256(item id) mod count + 1``: every condition of an item
    lands in the same shard, and the assignment depends neither on the item order nor on
    which other items the dataset holds.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    """Which shard, from 1 to ``count``."""
    count: int = Field(ge=1)
    """How many shards the run is split into."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        """Accept ``"K/N"`` as written on the command line or in a YAML config."""
        if isinstance(value, str):
            k, sep, n = value.partition("/")
            if not sep or not k.strip().isdigit() or not n.strip().isdigit():
                raise ValueError(f"a shard is K/N, e.g. 2/3 (got {value!r})")
            return {"index": int(k), "count": int(n)}
        return value

    @model_validator(mode="after")
    def _in_range(self) -> Shard:
        if self.index > self.count:
            raise ValueError(f"shard {self.index}/{self.count}: K must be between 1 and N")
        return self

    def holds(self, item_id: str) -> bool:
        """Whether the item with this id belongs to this shard."""
        digest = hashlib.sha256(item_id.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count + 1 == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def axis_values(axes: Any) -> Any:
    """Axis selections as their values' text, whatever a YAML or Python caller wrote: a lone value as a
    list of one, a number as the digits that read back as it (``0.7``, ``0``; each axis parses its own
    values, the temperature axis as numbers), so that ``{temperature: [0, 0.7]}`` and
    ``--temperature 0,0.7`` select the same. A YAML boolean (unquoted ``on``, ``off``, ``yes``) is refused:
    which word was written is lost.
    """
    if not isinstance(axes, Mapping):
        return axes

    def text(axis: Any, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"axis {axis}: {str(value).lower()} is a YAML boolean (an unquoted on, off, yes or no); "
                             "quote the value ('on')")
        if isinstance(value, int):
            return str(value)
        return repr(value) if isinstance(value, float) else value

    return {axis: [text(axis, v) for v in values] if isinstance(values, list | tuple) else [text(axis, values)]
            for axis, values in axes.items()}


class RunConfig(BaseModel):
    """Everything that determines a run's per-item records, and how it is executed.

    Two runs with equal configs, the same model weights and the same seed write
    byte-identical ``items.jsonl`` files.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    """Registered suite name (``lingdiag list``)."""
    model: str
    """Model spec: an embedded short name (``smollm2-135m``), ``hf:<hub id or dir>``,
    ``hf:<hub id>@<revision>``, ``gguf:<file>`` or ``openai:<model>[@<base_url>]`` (``lingdiag.model_spec``)."""
    dataset: str = "builtin"
    """``builtin``, ``official`` (fetched and checksummed) or a local path; for a suite file also a
    pandas DataFrame (anything with ``to_dict("records")``), held as ``rows:<sha256>`` (``lingdiag.io.inline``)."""
    axes: dict[str, list[str]] = Field(default_factory=dict)
    """Axis selection, e.g. ``{"strategy": ["zero-shot", "cot"]}``; missing axes take defaults."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Suite options, e.g. ``{"max_new_tokens": 512}``; validated by the suite's option model."""
    limit: int | None = Field(default=None, ge=1)
    """Run on this many items per condition, spread evenly over the dataset order."""
    seed: int = 0
    """The one seed of the run (shuffles, sampled decoding); suites receive it, never as an option."""
    chunk_items: int = Field(default=64, ge=1)
    """Items sent to the backend per call; a killed run redoes at most one chunk."""
    batch_tokens: int | None = Field(default=None, ge=1)
    """Padded-token budget per batch (transformers backend); None keeps the backend's defaults."""
    trust_remote_code: bool = False
    """Let a hub model run its own code (transformers backend)."""
    model_options: dict[str, Any] = Field(default_factory=dict)
    """Provider options, e.g. ``{"concurrency": 32}`` for ``openai:``; validated by the provider."""
    shard: Shard | None = None
    """Run only this shard of the items (after ``limit``); ``lingdiag merge`` joins the shards."""
    shard_base_urls: list[str] = Field(default_factory=list)
    """One server per shard for an ``openai:`` model: shard K sends to the K-th URL. (A
    ``{shard}`` in ``model`` is the other way: it is replaced by K.)"""
    think_tags: str | None = None
    """The tags around an inline thinking trace, ``OPEN,CLOSE``, or ``none`` to read the raw text
    as the answer; None: ``<think>,</think>`` (``lingdiag.thinking``)."""
    after_thinking: str | None = None
    """``RUN_DIR[:CONDITION]``: a finished generation run of the same model with thinking; each chat
    log-likelihood condition gets a twin scored after that run's thinking, replayed per item
    (``lingdiag.conditions.after_thinking``)."""
    items: list[str] | None = None
    """Run only these item ids (``--items FILE``: an anchors file of ``lingdiag items anchors``, or one id per
    line), before ``limit``; None runs every item."""
    per_token: bool = False
    """Ask every log-likelihood request for per-token log-probs and keep them (``token_logprobs``,
    ``token_spans``) in the records, for ``lingdiag view``'s surprisal; off, records stay as they were."""
    reader: str | None = None
    """Who reads the answers: None or ``rules`` (lingdiag's answer reader, ``lingdiag.parse.reader``);
    ``judge:SPEC``, the rules and then a model (any model spec) for the answers they leave
    unparsed, its labels marked judged; ``judge-all:SPEC``, the rules and the model on every
    answer, for their agreement (the rules' labels kept). ``lingdiag.parse.judge``."""

    @field_validator("axes", mode="before")
    @classmethod
    def _axes(cls, value: Any) -> Any:
        return axis_values(value)

    @field_validator("reader")
    @classmethod
    def _reader(cls, value: str | None) -> str | None:
        if value is not None and value != "rules":
            from lingdiag.parse.judge import JudgePolicy

            policy = JudgePolicy.parse(value)
            ModelSpec.parse(policy.spec)
        return value

    @model_validator(mode="after")
    def _think_tags(self) -> RunConfig:
        if self.think_tags is not None:
            from lingdiag.thinking import ThinkTags

            ThinkTags.parse(self.think_tags)
        return self

    @field_validator("dataset", mode="before")
    @classmethod
    def _rows(cls, value: Any) -> Any:
        if isinstance(value, str) or not holds_rows(value):
            if not isinstance(value, str):
                raise ValueError(f"expected a dataset name, a path or a DataFrame (anything with "
                                 f"to_dict('records')); got {type(value).__name__}")
            return value
        return hold(value)

    @model_validator(mode="after")
    def _shard_servers(self) -> RunConfig:
        if self.shard_base_urls and (self.shard is None or len(self.shard_base_urls) != self.shard.count):
            raise ValueError(f"shard_base_urls lists {len(self.shard_base_urls)} URLs; it needs one per shard "
                             f"({self.shard.count if self.shard else 'and --shard K/N'})")
        return self

    def unsharded(self) -> RunConfig:
        """The configuration of the whole run this shard belongs to."""
        return self.model_copy(update={"shard": None, "shard_base_urls": []})

    def model_spec(self) -> ModelSpec:
        """``model`` parsed, with this shard's server: ``{shard}`` replaced by K, or the K-th of ``shard_base_urls``."""
        if self.shard is None:
            return ModelSpec.parse(self.model)
        spec = ModelSpec.parse(self.model.replace("{shard}", str(self.shard.index)))
        if self.shard_base_urls:
            spec = spec.with_base_url(self.shard_base_urls[self.shard.index - 1])
        return spec

    def model_key(self) -> str:
        """The one answer to "same model?": the spec (with this shard's server) and every provider option,
        canonical. Two runs with one key are served by one loaded model (a study loads it once, checks it
        once and prices it once).
        """
        return json.dumps([str(self.model_spec()), self.provider_options()], sort_keys=True, default=str)

    def provider_options(self) -> dict[str, Any]:
        """The options the model's provider validates into its one options object: ``model_options``
        (``--model-option``, ``--dtype``) with ``--batch-tokens`` and ``--trust-remote-code``, which stay
        fields of their own so that recorded configs keep their bytes.
        """
        options = dict(self.model_options)
        if self.batch_tokens is not None:
            options["batch_tokens"] = self.batch_tokens
        if self.trust_remote_code:
            options["trust_remote_code"] = True
        return options

    def recorded(self) -> dict[str, Any]:
        """The configuration as ``meta.json`` keeps it and resume compares it: no URL credentials."""
        data = self.model_dump(mode="json")
        data["model"] = redact_url_secrets(self.model)
        data["shard_base_urls"] = [redact_url_secrets(u) for u in self.shard_base_urls]
        if self.think_tags is None:
            del data["think_tags"]  # configs of runs that never name tags stay as they were
        if self.after_thinking is None:
            del data["after_thinking"]
        if not self.per_token:
            del data["per_token"]
        if self.items is None:
            del data["items"]  # configs of runs over every item stay as they were
        if self.reader is None:
            del data["reader"]  # configs of runs read by the rules alone stay as they were
        else:
            data["reader"] = redact_url_secrets(self.reader)
        return data

    @classmethod
    def from_yaml(cls, path: Path) -> RunConfig:
        """Load a config file; errors name the file and the field."""
        data = load_config_yaml(path)
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise ConfigError(one_line(e, path)) from e

    @classmethod
    def fields_from_yaml(cls, path: Path) -> dict[str, Any]:
        """The fields a config file sets, any subset of a run's (``lingdiag run --config`` takes the others
        from its flags: a file holding only ``chunk_items: 400`` is one), each checked as a run checks it.

        Raises:
            ConfigError: not a mapping, an unknown key or a bad value: one line naming the file and the field.
        """
        data = load_config_yaml(path)
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a run config file is a mapping of run fields (suite, model, chunk_items...)")
        try:
            return _RunFields.model_validate(data).model_dump(exclude_unset=True)
        except ValidationError as e:
            raise ConfigError(one_line(e, path)) from None


_RunFields: type[RunConfig] = create_model(
    "RunFields", __base__=RunConfig,
    **{name: (Optional[field.annotation], None)  # type: ignore[call-overload]  # noqa: UP045 (a runtime type)
       for name, field in RunConfig.model_fields.items() if field.is_required()})
"""``RunConfig`` with every field optional: the part of a run a config file may set alone."""


def validate_options(model: type[OptionsT], raw: Mapping[str, Any], what: str) -> OptionsT:
    """Validate ``raw`` against an option model; one-line errors name the option and the valid ones.

    Args:
        model: A pydantic model with ``extra="forbid"`` (its field names or aliases are the options).
        raw: The options as given (``-o key=value``, YAML, or Python).
        what: Whose options these are, e.g. ``suite 'explica'`` or ``openai: backend``.

    Returns:
        The validated options.

    Raises:
        ConfigError: an unknown option, or a value of the wrong type.
    """
    try:
        return model.model_validate(dict(raw))
    except ValidationError as e:
        names = sorted(f.alias or name for name, f in model.model_fields.items())
        raise ConfigError(f"{one_line(e, what)}; valid options: {', '.join(names) or '(none)'}") from None


class NoOptions(BaseModel):
    """The option model of a suite or backend that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)
