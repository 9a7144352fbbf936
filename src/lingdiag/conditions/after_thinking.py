"""Competence after thinking: label log-likelihoods scored after the model's own completed thinking.

ImperfectiveNLI's central claim is a *decision-time* failure; thinking is supposed to repair it.
``lingdiag run SUITE --scoring loglik --after-thinking RUN_DIR[:CONDITION]`` asks whether it
moved the model's **preference** or only its surface answer: each chat-context log-likelihood
condition gets a twin, ``<condition>/after-thinking``, whose label continuations are scored
after the thinking that a finished generation run of the same model wrote for the same item
and prompt, replayed as the start of the assistant turn (``ThinkTags.wrap``: the trace between
its tags, a newline inside each and a blank line after; the continuation's tokens alone are scored).

The generation run is read through ``lingdiag.rundir`` alone (``RunMeta``, ``load_records``).
An item whose generation is unfinished, failed, thought nothing (or hid its thinking), is
missing, answered another prompt, or whose trace already holds the closing tag (an answer
inside the trace: replayed, it would close the block early) is not scored: counted and named per
reason in ``meta.json`` (``after_thinking``) and the table, never scored without its replay. The
generation run's ``items.jsonl`` is checksummed with the data (``meta.json``'s ``checksums``): a
resume after its traces changed is refused, never scored after the old ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from lingdiag.conditions.expander import NotScored, Plain, Ran
from lingdiag.conditions.registry import register_axis
from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError, RunError
from lingdiag.io.paths import sha256_file
from lingdiag.records import (
    ChatMessage,
    Item,
    ItemRecord,
    LoglikelihoodRequest,
    Prediction,
    Request,
    Response,
    TextOutput,
)
from lingdiag.rundir import ModelIdentity, RunStore
from lingdiag.rundir.parts import Part, register_part
from lingdiag.suite import Condition, Strategy
from lingdiag.thinking import ChecksThinking, Thinking, ThinkTags

if TYPE_CHECKING:  # reading a run's after_thinking part imports this axis alone, not the thinking axis
    from lingdiag.conditions.thinking import ThinkingPart
    from lingdiag.models.base import Backend

AXIS = "after_thinking"
"""The axis an after-thinking condition adds: the generation condition whose thinking it replays."""
SUFFIX = "after-thinking"
"""The last part of an after-thinking condition's name."""
IDENTITY_KEYS = ("backend", "model", "weights_sha256")
"""What must match between the generation run's model and the scoring model (adapters are in
the name; device and dtype may differ)."""
PART = "after_thinking"
"""``meta.json``'s part: condition → the generation run whose thinking it replays and the items not scored,
by reason; absent without replays."""


class AfterThinkingPart(Part):
    """One condition scored after another run's thinking: the run, its condition and setting,
    and the items not scored, by reason.
    """

    run: str
    condition: str
    setting: str
    not_scored: dict[str, list[str]]


@dataclass(frozen=True, slots=True)
class ReplaySource:
    """``--after-thinking RUN_DIR[:CONDITION]``: a generation run, and which of its conditions."""

    run: Path
    condition: str | None = None
    """None: the run's one condition with thinking."""

    @classmethod
    def parse(cls, value: str) -> ReplaySource:
        """``RUN_DIR`` or ``RUN_DIR:CONDITION`` (a directory whose name holds a colon is taken whole)."""
        head, colon, tail = value.rpartition(":")
        if not colon or Path(value).is_dir() or not head:
            return cls(Path(value))
        return cls(Path(head), tail or None)


@dataclass(frozen=True, slots=True)
class Replayed:
    """The generation an item's scoring replays, as its record names it."""

    run: str
    """The generation run's directory name."""
    condition: str
    item_id: str
    label: str
    """The label the generation's answer was parsed as (for the agreement table)."""

    def recorded(self) -> dict[str, str]:
        """As ``ItemRecord.replays`` holds it."""
        return {"run": self.run, "condition": self.condition, "item_id": self.item_id, "label": self.label}


@dataclass(frozen=True, slots=True)
class Replay:
    """One item's completed thinking, ready to replay."""

    prefix: str
    """The assistant turn's start: the trace in its tags."""
    messages: tuple[ChatMessage, ...]
    """The prompt the generation answered (scored only after the same prompt)."""
    source: Replayed


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one per run, its maps are not hashable
class Thoughts:
    """A finished generation run's completed thinking, per item."""

    run: Path
    condition: str
    setting: str
    """The thinking setting the generation ran under (``on``, ``budget:N``...)."""
    tags: ThinkTags
    identity: ModelIdentity
    replays: Mapping[str, Replay]
    """Item id → its replay."""
    unusable: Mapping[str, str]
    """Item id → why its generation cannot be replayed (``unfinished``, ``no thinking``, ``failed``)."""
    items_sha256: str
    """The SHA-256 of the run's ``items.jsonl`` as read."""

    @classmethod
    def load(cls, source: ReplaySource) -> Thoughts:
        """Read ``source``'s run directory.

        Raises:
            ConfigError: not a run directory, no condition with thinking, or the one named is not one.
        """
        store = RunStore(source.run)
        try:
            meta = store.read_meta()
        except RunError as e:
            raise ConfigError(f"--after-thinking {source.run}: {e}") from None
        from lingdiag.conditions.thinking import PART  # here: reading this axis's own part needs no other axis

        recorded: dict[str, ThinkingPart] = meta.parts.get(PART) or {}
        thinking = {c: s for c, s in recorded.items() if s.setting != "off"}
        condition = source.condition
        if condition is None:
            if len(thinking) != 1:
                raise ConfigError(f"--after-thinking {source.run}: name the condition to replay as RUN_DIR:CONDITION "
                                  f"(conditions with thinking: {_listed(thinking)})")
            condition = next(iter(thinking))
        if condition not in thinking:
            raise ConfigError(f"--after-thinking {source.run}: condition {condition!r} ran without thinking "
                              f"(conditions with thinking: {_listed(thinking)})")
        tags = ThinkTags(*thinking[condition].tags)
        replays: dict[str, Replay] = {}
        unusable: dict[str, str] = {}
        for r in store.load_records():
            if r.condition != condition:
                continue
            reason, replay = _replay(r, store.root.name, tags)
            if replay is not None:
                replays[r.item_id] = replay
            else:
                unusable[r.item_id] = reason
        return cls(store.root, condition, thinking[condition].setting, tags, meta.identity, replays, unusable,
                   sha256_file(store.items_path))

    def check_model(self, identity: ModelIdentity) -> None:
        """Refuse to score another model after this run's thinking.

        Raises:
            ConfigError: the models differ in name, backend or weights.
        """
        theirs, mine = self.identity.fields, identity.fields
        # A weights hash a backend could not compute (a server) is no evidence either way.
        differ = [k for k in IDENTITY_KEYS if theirs.get(k, "") != mine.get(k, "")
                  and (k != "weights_sha256" or (theirs.get(k) and mine.get(k)))]
        if differ:
            raise ConfigError(f"--after-thinking {self.run}: its thinking comes from model {theirs.get('model')!r}, "
                              f"not {mine.get('model')!r} ({', '.join(differ)} differ); competence after thinking "
                              "replays the scored model's own thinking")

    def recorded(self, not_scored: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        """As ``meta.json``'s ``after_thinking`` holds it for one condition."""
        return {"run": str(self.run), "condition": self.condition, "setting": self.setting,
                "not_scored": {k: list(v) for k, v in not_scored.items()}}


def _listed(conditions: Mapping[str, Any]) -> str:
    return ", ".join(conditions) or "none; run it with --thinking on or budget:N"


def _replay(r: ItemRecord, run: str, tags: ThinkTags) -> tuple[str, Replay | None]:
    """One generation record's replay, or why it has none."""
    output = r.outputs[0] if len(r.outputs) == 1 else None
    prompt = r.prompts[0] if len(r.prompts) == 1 else None
    if r.error is not None:
        return "failed", None
    if not isinstance(prompt, list) or not isinstance(output, TextOutput):
        return "not a chat generation", None
    if output.unfinished:
        return "unfinished", None
    if not output.reasoning:  # hidden by a server counts as none: nothing to replay
        return "no thinking", None
    if tags.close in output.reasoning:  # replayed, the block would close early with an answer in it
        return "closing tag inside the trace", None
    messages = tuple(ChatMessage(m["role"], m.get("content", "")) for m in prompt)
    return "", Replay(tags.wrap(output.reasoning.strip()), messages,
                      Replayed(run, r.condition, r.item_id, r.label))


@dataclass(frozen=True, slots=True)
class AfterThinkingStrategy:
    """A chat log-likelihood strategy whose requests replay the model's own thinking first."""

    inner: Strategy
    thoughts: Thoughts

    def render(self, item: Item) -> Sequence[Request]:
        """The inner requests, each opening the assistant turn with the item's replayed thinking."""
        replay = self.thoughts.replays[item.id]
        # Rendered under the generation's switch ("on": budget forcing closes the block later and
        # renders the same first prompt), so the context is the prompt the thinking followed.
        setting = Thinking("on", tags=self.thoughts.tags)
        return [replace(r, assistant_prefix=replay.prefix, thinking=setting) if isinstance(r, LoglikelihoodRequest)
                else r for r in self.inner.render(item)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The inner strategy's prediction."""
        return self.inner.parse(item, responses)

    def replays(self, item_id: str) -> dict[str, str]:
        """The generation ``item_id``'s scoring replays, as its record names it."""
        return self.thoughts.replays[item_id].source.recorded()

    def scorable(self, items: Sequence[Item]) -> tuple[list[Item], dict[str, list[str]]]:
        """The ``items`` that can be scored after their thinking, and the others by reason."""
        kept: list[Item] = []
        not_scored: dict[str, list[str]] = defaultdict(list)
        for it in items:
            replay = self.thoughts.replays.get(it.id)
            if replay is None:
                not_scored[self.thoughts.unusable.get(it.id, "missing from the run")].append(it.id)
            elif any(r.messages != replay.messages for r in self.inner.render(it)
                     if isinstance(r, LoglikelihoodRequest)):
                not_scored["another prompt"].append(it.id)
            else:
                kept.append(it)
        return kept, dict(not_scored)


def _chat_loglik(condition: Condition) -> bool:
    """Whether ``condition`` scores log-likelihoods after a chat prompt (and nothing else)."""
    requests = condition.strategy.render(condition.items[0]) if condition.items else []
    return bool(requests) and all(isinstance(r, LoglikelihoodRequest) and r.messages for r in requests)


@dataclass(frozen=True)
class AfterThinkingAxis(Plain):
    """``--after-thinking``: each chat log-likelihood condition followed by its after-thinking twin."""

    thoughts: Thoughts | None = None
    part: ClassVar[str] = PART
    takes: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def of(cls, config: RunConfig) -> AfterThinkingAxis:
        """The generation run ``config`` replays (none: no twin)."""
        if config.after_thinking is None:
            return cls()
        return cls(Thoughts.load(ReplaySource.parse(config.after_thinking)))

    def expand(self, conditions: Sequence[Condition]) -> list[Condition]:
        """Each chat log-likelihood condition followed by its after-thinking twin.

        Raises:
            ConfigError: no condition scores log-likelihoods after a chat prompt.
        """
        if self.thoughts is None:
            return list(conditions)
        out: list[Condition] = []
        for c in conditions:
            out.append(c)
            if _chat_loglik(c):
                out.append(Condition(f"{c.name}/{SUFFIX}", {**c.axes, AXIS: self.thoughts.condition},
                                     AfterThinkingStrategy(c.strategy, self.thoughts), c.items))
        if len(out) == len(conditions):
            raise ConfigError("--after-thinking scores label log-likelihoods after a chat prompt; none of the "
                              "conditions does (e.g. add --scoring loglik)")
        return out

    def select(self, condition: Condition, items: Sequence[Item]) -> tuple[list[Item], dict[str, list[str]] | None]:
        """A twin's items that have completed thinking to replay (after ``--limit``: it scores the plain
        condition's items that have some).
        """
        if isinstance(condition.strategy, AfterThinkingStrategy):
            return condition.strategy.scorable(items)
        return list(items), None

    def check(self, backend: Backend) -> None:
        """Refuse another model, or one that cannot be asked to think, before the plain condition is scored."""
        if self.thoughts is None:
            return
        self.thoughts.check_model(ModelIdentity(backend.identity))
        if isinstance(backend, ChecksThinking):  # the twin renders its prompt under the switch "on"
            backend.check_thinking(Thinking("on", tags=self.thoughts.tags))

    def sources(self) -> dict[str, str]:
        """The generation run's records, whose traces the twins replay."""
        if self.thoughts is None:
            return {}
        return {str(self.thoughts.run / "items.jsonl"): self.thoughts.items_sha256}

    def recorded(self, ran: Ran) -> dict[str, Any] | None:
        """Twin → the generation run it replays and the items it did not score, by reason."""
        if self.thoughts is None:
            return None
        return {c: self.thoughts.recorded(reasons) for c, reasons in ran.not_scored.items() if c.endswith("/" + SUFFIX)}

    def shared(self, part: Any) -> Any:
        """The part but the items not scored (each shard names its own)."""
        return {c: {k: v for k, v in entry.items() if k != "not_scored"} for c, entry in (part or {}).items()}

    def note(self, not_scored: NotScored) -> str:
        """The table's line on the items an after-thinking condition did not score (empty if none)."""
        parts = [f"{c}: " + "; ".join(f"{reason} {len(ids)} ({', '.join(ids)})" for reason, ids in by_reason.items())
                 for c, by_reason in not_scored.items() if by_reason]
        if not parts:
            return ""
        return "**Not scored after thinking** (no completed thinking to replay): " + " | ".join(parts) + "\n\n"


register_part(PART, dict[str, AfterThinkingPart])
register_axis('after_thinking', order=20)(AfterThinkingAxis.of)
