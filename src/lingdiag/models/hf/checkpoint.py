"""Which weights a transformers backend loads: a hub id or directory, its display name, its
weights' hash and, for ``hf:ID@REVISION``, the hub commit that revision resolved to.

A revision is resolved once, when the backend is built, and the commit hash is what both
``from_pretrained`` calls load: a branch that moves between two loads (``main``, a training
run's ``latest``) cannot hand the model and the tokenizer different commits, and the hash in
the identity (so ``meta.json`` and cache keys) names exactly the weights that answered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import BackendError, ConfigError

_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Revision:
    """A hub revision as asked (``step100``) and the commit it resolved to."""

    asked: str
    commit: str


@dataclass(frozen=True)
class Checkpoint:
    """The weights of one backend; what its float32 twin loads again."""

    path: str
    """Hub id or local directory."""
    name: str | None = None
    """Display name (default: ``path``, with ``@REVISION`` when one is asked)."""
    weights_hash: str = ""
    """SHA-256 of the weights files, recorded in ``meta.json`` and cache keys (empty for hub ids)."""
    revision: Revision | None = None
    """The hub revision, for ``hf:ID@REVISION``."""

    @property
    def display_name(self) -> str:
        """The name, or the path with the revision as asked."""
        base = self.name or self.path
        return f"{base}@{self.revision.asked}" if self.revision else base


def resolve_revision(repo_id: str, revision: str) -> Revision:
    """The commit ``revision`` (a branch, tag or commit) names in the hub repository ``repo_id``.

    A full commit hash is taken as it is, so a pinned checkpoint loads from the local hub cache
    without asking the hub; anything else is one call to the hub (``HF_ENDPOINT`` says which).

    Raises:
        ConfigError: ``repo_id`` is a local directory, which has no revisions.
        BackendError: the hub cannot be reached or knows no such repository or revision (one line).
    """
    if Path(repo_id).expanduser().is_dir():
        raise ConfigError(f"hf:{repo_id}@{revision}: {repo_id} is a local directory, which has no revisions; "
                          "name the checkpoint's own directory")
    if _COMMIT.match(revision):
        return Revision(revision, revision)
    from huggingface_hub import HfApi

    try:
        commit = HfApi().model_info(repo_id, revision=revision, timeout=30).sha
    # Broad on purpose: an unreachable hub raises the HTTP library's own errors (no OSError), offline mode
    # an OSError, a malformed id a ValueError; each is this one line, never a traceback.
    except Exception as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        raise BackendError(f"hf:{repo_id}@{revision}: cannot resolve the revision on the hub: {reason}") from None
    if not commit:
        raise BackendError(f"hf:{repo_id}@{revision}: the hub named no commit for this revision")
    return Revision(revision, commit)
