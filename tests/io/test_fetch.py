import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.errors import DatasetError
from lingdiag.io import fetch as fetch_mod
from lingdiag.registry import load_plugins


def test_fetch_from_loopback_url_verifies_and_caches(server: tuple[str, list[str]]) -> None:
    load_plugins()
    base, log = server
    (path,) = fetch_mod.fetch("imperfective", base)
    assert path == fetch_mod.datasets_dir() / "imperfective_nli" / "imperfectiveNLI.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == fetch_mod.OFFICIAL["imperfective"][0].sha256
    assert log == ["/imperfective_nli/imperfectiveNLI.json"]
    fetch_mod.fetch("imperfective", base)  # already verified in the cache: no second download
    assert len(log) == 1


def test_pinned_url_is_the_public_release() -> None:
    load_plugins()
    (f,) = fetch_mod.OFFICIAL["imperfective"]
    assert f.url == ("https://raw.githubusercontent.com/boleima/ImperfectiveParadox/"
                     "f25d08e0d63bdafafc891d37d687c9162edfe4c0/data/imperfectiveNLI.json")


def test_checksum_mismatch_is_refused(tmp_path: Path) -> None:
    load_plugins()
    bad = tmp_path / "imperfective_nli"
    bad.mkdir()
    (bad / "imperfectiveNLI.json").write_text("[]")
    with pytest.raises(DatasetError, match="SHA-256 mismatch"):
        fetch_mod.fetch("imperfective", str(tmp_path))
    assert not (fetch_mod.datasets_dir() / "imperfective_nli" / "imperfectiveNLI.json").exists()


def test_unreachable_server_is_a_dataset_error() -> None:
    load_plugins()
    with pytest.raises(DatasetError, match="download failed"):
        fetch_mod.fetch("imperfective", "http://127.0.0.1:9")


def test_offline_fetch_names_from_and_the_mirror_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    # The pinned URL unreachable (as on an offline cluster node): the error says how to go on.
    load_plugins()
    (f,) = fetch_mod.OFFICIAL["imperfective"]
    monkeypatch.setitem(fetch_mod.OFFICIAL, "imperfective", (replace(f, url="http://127.0.0.1:9/x.json"),))
    with pytest.raises(DatasetError) as e:
        fetch_mod.fetch("imperfective")
    message = str(e.value)
    assert "\n" not in message and message.startswith("http://127.0.0.1:9/x.json: download failed")
    assert message.endswith("laid out as imperfective_nli/imperfectiveNLI.json (or serve them) and run: "
                            "lingdiag data fetch imperfective --from DIR")


def test_a_mirror_without_the_file_names_the_layout(tmp_path: Path) -> None:
    load_plugins()
    with pytest.raises(DatasetError, match="the mirror must hold imperfective_nli/imperfectiveNLI.json$"):
        fetch_mod.fetch("imperfective", str(tmp_path))


def test_official_spec_before_fetch_says_how() -> None:
    load_plugins()
    with pytest.raises(DatasetError, match="run: lingdiag data fetch imperfective .*--from DIR"):
        fetch_mod.official_path("imperfective", "imperfective_nli/imperfectiveNLI.json")


def test_cli_fetch_and_stats(server: tuple[str, list[str]]) -> None:
    base, _ = server
    runner = CliRunner()
    result = runner.invoke(app, ["fetch", "imperfective", "--from", base])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["data", "stats", "imperfective", "--dataset", "official", "--json"])
    assert result.exit_code == 0, result.output
    assert '"n": 400' in result.output and '"Creation"' in result.output


def test_a_file_past_the_bound_is_refused_while_it_streams(server: tuple[str, list[str]], shared_datasets: Path,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44 item 10: ``--from`` read a whole 400 MB answer into memory before its checksum."""
    import os

    load_plugins()
    base, _ = server
    monkeypatch.setenv("LINGDIAG_FETCH_MAX_BYTES", "4096")  # the real file is larger
    for mirror in (base, str(shared_datasets)):
        with pytest.raises(DatasetError, match=r"larger than a fetched file may be; the limit is 4096 bytes per "
                                               r"fetched file; raise it with LINGDIAG_FETCH_MAX_BYTES"):
            fetch_mod.fetch("imperfective", mirror)
    assert not (fetch_mod.datasets_dir() / "imperfective_nli" / "imperfectiveNLI.json").exists()
    monkeypatch.delenv("LINGDIAG_FETCH_MAX_BYTES")
    fifo = tmp_path / "fifo" / "imperfective_nli"
    fifo.mkdir(parents=True)
    os.mkfifo(fifo / "imperfectiveNLI.json")
    with pytest.raises(DatasetError, match="not a regular file"):
        fetch_mod.fetch("imperfective", str(tmp_path / "fifo"))
