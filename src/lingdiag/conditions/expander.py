"""The protocol every condition expander follows, and what a run tells it to record."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from lingdiag.records import Item, Request
from lingdiag.suite import Condition

if TYPE_CHECKING:  # a type only: analyses import the axes' names without importing models
    from lingdiag.models.base import Backend, Capabilities
    from lingdiag.rundir import RunMeta

NotScored = Mapping[str, Mapping[str, Sequence[str]]]
"""Condition → reason → the item ids of its selection it cannot score."""


@dataclass(frozen=True)
class Ran:
    """What a run did so far, for each expander to record its part of ``meta.json`` from."""

    conditions: Sequence[Condition]
    """The conditions reached so far, in order."""
    requests: Mapping[str, Sequence[Request]]
    """Condition → its rendered requests."""
    declined: Collection[str]
    """The conditions not sent at all: the backend declared it cannot serve their requests."""
    not_scored: NotScored
    backend: Backend | None = None
    """The scoring model; None in a merge of shards, which keeps the ``shard``'s backend parts."""
    shard: RunMeta | None = None
    """A merge's first shard (the shards' own parts were compared equal)."""


@runtime_checkable
class Replays(Protocol):
    """A strategy whose requests replay another run's record: each of its records names which."""

    def replays(self, item_id: str) -> dict[str, str]:
        """``ItemRecord.replays`` of ``item_id``."""
        ...


class Expander(Protocol):
    """One axis of every suite: it may add conditions, narrow their items, refuse a model before
    anything runs, name the files it reads, and records its own ``meta.json`` part.
    """

    part: ClassVar[str]
    """The ``RunMeta`` field it records (``thinking``, ``after_thinking``...)."""
    takes: ClassVar[tuple[str, ...]]
    """The ``RunConfig.axes`` it reads itself (no suite declares them)."""

    def expand(self, conditions: Sequence[Condition]) -> list[Condition]:
        """The run's conditions with this axis applied."""
        ...

    def select(self, condition: Condition, items: Sequence[Item]) -> tuple[list[Item], dict[str, list[str]] | None]:
        """The ``items`` of ``condition`` it can score (after ``--limit`` and ``--shard``), and the others
        by reason (None: it does not select ``condition``'s items).
        """
        ...

    def require(self, capabilities: Capabilities, backend: str) -> None:
        """Refuse a backend (named ``backend``) whose declared ``capabilities`` lack what this axis asks of
        it (a ``ConfigError``): called when the run or study is planned, before any model loads.
        """
        ...

    def check(self, backend: Backend) -> None:
        """Refuse the loaded ``backend`` before any condition is scored (a ``ConfigError``): what only the
        model itself can say (its chat template's thinking switch, another model's replayed thinking).
        """
        ...

    def sources(self) -> dict[str, str]:
        """Files the axis reads → SHA-256: recorded with the data's, so a resume after they changed is refused."""
        ...

    def recorded(self, ran: Ran) -> Any:
        """Its ``meta.json`` part (None: absent)."""
        ...

    def shared(self, part: Any) -> Any:
        """What of its recorded ``part`` every shard of one run holds alike (compared by ``merge``)."""
        ...

    def note(self, not_scored: NotScored) -> str:
        """The table's opening line on the items ``select`` left out (empty if none)."""
        ...


class Plain:
    """What an expander does where it does nothing: inherit it and override the rest."""

    def expand(self, conditions: Sequence[Condition]) -> list[Condition]:
        """The conditions unchanged."""
        return list(conditions)

    def select(self, condition: Condition, items: Sequence[Item]) -> tuple[list[Item], dict[str, list[str]] | None]:
        """Every item, none of them its choice."""
        return list(items), None

    def require(self, capabilities: Capabilities, backend: str) -> None:
        """Nothing asked of any backend."""

    def check(self, backend: Backend) -> None:
        """Every backend."""

    def sources(self) -> dict[str, str]:
        """No file."""
        return {}

    def shared(self, part: Any) -> Any:
        """The whole part."""
        return part

    def note(self, not_scored: NotScored) -> str:
        """No line."""
        return ""
