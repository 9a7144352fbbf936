"""Which weights a transformers backend loads: a hub id or directory, its display name, its
weights' hash and, for ``hf:ID@REVISION``, the hub commit that revision resolved to.

A revision is resolved once, when the backend is built, and the commit hash is what both
``from_pretrained`` calls load: a branch that moves between two loads (``main``, a training
run's ``latest``) cannot hand the model and the tokenizer different commits, and the hash in
the identity (so ``meta.json`` and cache keys) names exactly the weights that answered.

Offline (``HF_HUB_OFFLINE=1``, an air-gapped cluster node), a branch or tag resolves from the local
hub cache instead: the commit its ``refs/`` file names, as ``huggingface_hub`` itself reads it
(``try_to_load_from_cache``), provided that commit's snapshot holds the model's ``config.json``.
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
    without asking the hub; offline (``HF_HUB_OFFLINE=1``), a name is read from the local hub cache's
    refs (:func:`cached_revision`); anything else is one call to the hub (``HF_ENDPOINT`` says which).

    Raises:
        ConfigError: ``repo_id`` is a local directory, which has no revisions.
        BackendError: the hub cannot be reached or knows no such repository or revision, or, offline,
            the cache holds no such revision (one line).
    """
    if Path(repo_id).expanduser().is_dir():
        raise ConfigError(f"hf:{repo_id}@{revision}: {repo_id} is a local directory, which has no revisions; "
                          "name the checkpoint's own directory")
    if _COMMIT.match(revision):
        return Revision(revision, revision)
    from huggingface_hub import HfApi, constants

    if constants.is_offline_mode():
        return cached_revision(repo_id, revision)

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


def cached_revision(repo_id: str, revision: str) -> Revision:
    """The commit the local hub cache records for ``revision`` of ``repo_id`` (its ``refs/`` file), read
    by ``huggingface_hub.try_to_load_from_cache`` and kept only if that commit's snapshot holds
    ``config.json`` (a ref whose files were never downloaded cannot load offline).

    Raises:
        BackendError: the cache holds no such revision of the repository (one line, naming the cache).
    """
    from huggingface_hub import constants, try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except ValueError as e:  # a malformed repository id or revision name
        raise BackendError(f"hf:{repo_id}@{revision}: {' '.join(str(e).split())}") from None
    commit = Path(found).parent.name if isinstance(found, str) else ""
    if not _COMMIT.match(commit):
        raise BackendError(f"hf:{repo_id}@{revision}: offline (HF_HUB_OFFLINE=1) and the hub cache "
                           f"{constants.HF_HUB_CACHE} holds no snapshot of this revision; download it once online "
                           "(or name its commit hash)")
    return Revision(revision, commit)
