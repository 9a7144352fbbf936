"""Download the papers' official data files at run time, pinned and checksummed.

The files are never shipped with lingdiag. Each suite registers its official files
(public URL at a pinned commit, local name, SHA-256); ``lingdiag data fetch SUITE`` downloads
them into ``$LINGDIAG_CACHE/datasets``. ``--from`` takes a mirror (a directory or a base
URL laid out like the local names), e.g. a copy of the authors' release.
"""

from __future__ import annotations

import hashlib
import urllib.error
import urllib.request
from collections.abc import Generator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from lingdiag.errors import DatasetError, UnknownNameError
from lingdiag.io.atomic import atomic_binary, make_dir
from lingdiag.io.limits import FETCH_BYTES
from lingdiag.io.paths import cache_dir, sha256_file

RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class OfficialFile:
    """One pinned file of an official release."""

    url: str
    local: str
    """Path under the datasets cache (and under a ``--from`` mirror)."""
    sha256: str
    """Empty where no checksum is known (only the pinned commit vouches for the file); a run
    still records the SHA-256 of what it read."""
    licence: str = ""
    """The licence as its authors state it (recorded; ``lingdiag adapt`` reads it)."""
    trainable: bool = True
    """Whether the licence allows training models on the file (ExpliCa's does not)."""


OFFICIAL: dict[str, tuple[OfficialFile, ...]] = {}


def register_official(suite: str, files: tuple[OfficialFile, ...]) -> None:
    """Declare the official files of ``suite``."""
    OFFICIAL[suite] = files


def datasets_dir() -> Path:
    """Where fetched files live."""
    return cache_dir() / "datasets"


_CHUNK = 1 << 20


def _chunks(source: str, timeout: float) -> Generator[bytes, None, None]:
    """The bytes at ``source`` (a URL or a local file), a chunk at a time."""
    if "://" not in source and Path(source).exists() and not Path(source).is_file():
        raise DatasetError("not a regular file", path=source)  # a FIFO would block, a folder is no file
    try:
        with (urllib.request.urlopen(source, timeout=timeout) if "://" in source  # noqa: S310 - http(s) only
              else Path(source).open("rb")) as stream:
            while chunk := stream.read(_CHUNK):
                yield chunk
    except (urllib.error.URLError, TimeoutError) as e:
        raise DatasetError(f"download failed: {e}", path=source) from e
    except OSError as e:
        raise DatasetError(f"download failed: {e}" if "://" in source else f"cannot read: {e.strerror}",
                           path=source) from e


def _copy(source: str, out: IO[bytes], timeout: float = 60) -> str:
    """Copy the bytes at ``source`` into ``out`` a chunk at a time, hashing them as they come (an
    answer is never held whole in memory); the SHA-256. Past ``FETCH_BYTES`` the copy stops and is
    refused. A failed write is the atomic writer's ``WriteError`` (naming the target), not a failed download.
    """
    bound = int(FETCH_BYTES.value)
    digest, size = hashlib.sha256(), 0
    with closing(_chunks(source, timeout)) as chunks:
        for chunk in chunks:
            size += len(chunk)
            if size > bound:
                raise DatasetError(f"larger than a fetched file may be; {FETCH_BYTES.how_to_raise()}", path=source)
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def _verified(path: Path, f: OfficialFile) -> bool:
    return path.exists() and (not f.sha256 or sha256_file(path) == f.sha256)


def offline_hint(suite: str, f: OfficialFile) -> str:
    """How to fetch ``f`` without the internet: a mirror holding it under its local name."""
    return (f"offline, copy the files to a directory DIR laid out as {f.local} (or serve them) and run: "
            f"lingdiag data fetch {suite} --from DIR")


def fetch(suite: str, mirror: str | None = None, only: Sequence[str] = ()) -> list[Path]:
    """Download (or copy from ``mirror``) every official file of ``suite``, verifying SHA-256.

    Args:
        suite: A suite with registered official files.
        mirror: Directory or base URL holding the files under their local names.
        only: File names without extension (``wh_island``) to fetch instead of all.

    Returns:
        The local paths, all verified where a checksum is known.
    """
    if suite not in OFFICIAL:
        raise UnknownNameError("official file set", suite, OFFICIAL)
    chosen = [f for f in OFFICIAL[suite] if not only or Path(f.local).stem in only]
    unknown = set(only) - {Path(f.local).stem for f in OFFICIAL[suite]}
    if unknown:
        raise UnknownNameError(f"{suite} file", sorted(unknown)[0], (Path(f.local).stem for f in OFFICIAL[suite]))
    paths = []
    for f in chosen:
        target = datasets_dir() / f.local
        if _verified(target, f):
            paths.append(target)
            continue
        source = f.url if mirror is None else (
            mirror.rstrip("/") + "/" + f.local if "://" in mirror else str(Path(mirror) / f.local))
        make_dir(target.parent)
        # Streamed into a temporary file beside the target, renamed over it only once its SHA-256
        # matches: a failed check or a killed fetch leaves the target as it was.
        with atomic_binary(target) as out:
            try:
                sha = _copy(source, out)
            except DatasetError as e:
                if mirror is not None:
                    raise DatasetError(f"{e.args[0]}; the mirror must hold {f.local}") from e
                raise DatasetError(f"{e.args[0]}; {offline_hint(suite, f)}") from e
            if f.sha256 and sha != f.sha256:
                raise DatasetError(f"SHA-256 mismatch: expected {f.sha256}, got {sha}; "
                                   "the mirror holds a different version of this file", path=source)
        paths.append(target)
    return paths


def official_path(suite: str, local: str) -> Path:
    """The verified cached copy of an official file; explains how to fetch it if absent."""
    for f in OFFICIAL.get(suite, ()):
        if f.local == local:
            path = datasets_dir() / f.local
            if not path.exists():
                raise DatasetError(f"the official {suite} data is not downloaded yet; "
                                   f"run: lingdiag data fetch {suite} ({offline_hint(suite, f)})", path=path)
            if not _verified(path, f):
                raise DatasetError("cached file fails its SHA-256 check; run: lingdiag data fetch " + suite, path=path)
            return path
    raise DatasetError(f"no official file {local!r} registered for {suite}")


def fetched(suite: str) -> list[Path]:
    """The official files of ``suite`` already downloaded and verified, in registration order.

    Raises:
        DatasetError: a downloaded file fails its checksum (changed since): leaving it out would
            report a result over fewer paradigms than asked, under the same name.
    """
    out = []
    for f in OFFICIAL.get(suite, ()):
        path = datasets_dir() / f.local
        if not path.exists():
            continue
        if not _verified(path, f):
            raise DatasetError(f"SHA-256 mismatch: the file changed since it was fetched; run: lingdiag data fetch "
                               f"{suite} --only {Path(f.local).stem}", path=path)
        out.append(path)
    return out
