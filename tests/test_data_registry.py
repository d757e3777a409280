"""The dataset registry and ``frontierbo data list / where / verify / fetch``.

Downloads are tested against an HTTP server on 127.0.0.1 serving files from ``tmp_path``;
nothing else is reached.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading
import tomllib
from pathlib import Path

import pytest

from frontierbo import data
from frontierbo.data import (
    DATA_ENV,
    KNOWN_SHA256,
    DataFetchError,
    DataFile,
    Dataset,
    fetch,
    registry,
    resolve_data_path,
)

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = b"x,y\n1,2\n3,4\n"


@pytest.fixture
def server(tmp_path):
    """``(base_url, folder)``: an HTTP server on 127.0.0.1 serving ``folder``."""
    folder = tmp_path / "served"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", folder
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def toy(monkeypatch):
    """A registry with one fetchable dataset ``toy`` (file ``toy/table.csv`` = PAYLOAD) and one
    without a public URL, ``private``; the real registry is restored after the test."""
    entry = DataFile("toy/table.csv", hashlib.sha256(PAYLOAD).hexdigest(), len(PAYLOAD), "unused")
    datasets = {
        "toy": Dataset("toy", "a toy table", "the test", "CC0", "the test", (entry,)),
        "private": Dataset(
            "private",
            "unpublished",
            "made here",
            "none",
            "the test",
            (DataFile("private/p.csv", "0" * 64, 1),),
            not_fetchable="made here, never published",
        ),  # fmt: skip
    }
    monkeypatch.setattr(data, "registry", lambda: datasets)
    return entry


@pytest.fixture
def only_root(tmp_path, monkeypatch):
    """The data lookup searches ``tmp_path / "root"`` only (not ../shared, not the user cache)."""
    root = tmp_path / "root"
    monkeypatch.setattr(data, "searched_roots", lambda: [("test root", root)])
    return root


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# -- the registry ---------------------------------------------------------------------------------
def test_registry_lists_every_file_the_loaders_check():
    from frontierbo.attack.data import MNIST_FILES, MNIST_TEST_IDX
    from frontierbo.ldp.realdata import LDP_SHA256
    from frontierbo.macro.data import TEMPERATURE_FILES, TRAFFIC_FILES
    from frontierbo.quantum.automl import PIMA_FILE
    from frontierbo.quantum.features import REFERENCE_FILE

    paths = [*LDP_SHA256, *TRAFFIC_FILES, *TEMPERATURE_FILES, PIMA_FILE, REFERENCE_FILE]
    paths += [path for path, _, _, _ in MNIST_FILES.values()]
    paths += [path for path, _, _ in MNIST_TEST_IDX]
    assert set(paths) <= set(KNOWN_SHA256)


def test_the_registry_is_the_only_place_a_data_checksum_is_written():
    """One registry of data files and checksums: no loader keeps a copy of a sha256."""
    import re

    src = Path(__file__).resolve().parents[1] / "src" / "frontierbo"
    sha = re.compile(r"[\"'][0-9a-f]{64}[\"']")
    copies = [str(p) for p in src.rglob("*.py") if sha.search(p.read_text(encoding="utf-8"))]
    assert copies == []


def test_registry_entries_are_complete_and_shipped_as_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data.REGISTRY_FILE in config["tool"]["setuptools"]["package-data"]["frontierbo"]
    paths = [f.path for d in registry().values() for f in d.files]
    assert len(paths) == len(set(paths)) == len(KNOWN_SHA256)
    for dataset in registry().values():
        assert dataset.description and dataset.source and dataset.licence and dataset.files
        for entry in dataset.files:
            assert len(entry.sha256) == 64 and entry.bytes > 0
        if dataset.fetchable:
            assert all(f.url.startswith("https://") for f in dataset.files), dataset.name
        else:
            assert dataset.not_fetchable, dataset.name
    # every dataset without a licence of its own says so; those whose bytes are public are
    # fetchable from their source, the ones made or repaired here are not
    assert not registry()["ura"].fetchable and not registry()["quantum-reference"].fetchable
    assert registry()["ldp"].fetchable and registry()["pima"].fetchable


@pytest.mark.data(*KNOWN_SHA256)
def test_registered_sha256_match_the_shared_files():
    checks = data.verify()
    assert [c.path for c in checks if c.status != "ok"] == []


# -- lookup ---------------------------------------------------------------------------------------
def test_missing_file_message_names_the_fetch_command(only_root):
    with pytest.raises(FileNotFoundError, match="frontierbo data fetch ldp") as err:
        resolve_data_path("ldp/stocks/fin.csv")
    assert "checks its sha256" in str(err.value)
    with pytest.raises(FileNotFoundError, match="frontierbo data fetch ura` cannot download"):
        resolve_data_path("ura/ura_private_projects.csv")


def test_user_cache_is_a_data_root(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data.user_cache_root() == tmp_path / "cache" / "frontierbo"
    assert data.default_fetch_root() == tmp_path / "cache" / "frontierbo"
    assert data.searched_roots()[-1] == ("user cache", tmp_path / "cache" / "frontierbo")
    target = tmp_path / "cache" / "frontierbo" / "only" / "in-cache.txt"
    target.parent.mkdir(parents=True)
    target.write_text("here")
    assert resolve_data_path("only/in-cache.txt") == target
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "env"))
    assert data.default_fetch_root() == tmp_path / "env"


# -- fetch ----------------------------------------------------------------------------------------
def test_fetch_writes_a_good_file_with_its_sha256(server, toy, tmp_path):
    base, served = server
    (served / "toy").mkdir()
    (served / "toy" / "table.csv").write_bytes(PAYLOAD)
    root = tmp_path / "root"
    paths = fetch("toy", root=root, url=base)
    assert paths == [root / "toy" / "table.csv"]
    assert data.file_sha256(paths[0]) == toy.sha256
    assert _files(root) == paths  # no temporary file left
    (served / "toy" / "table.csv").unlink()  # present and right: not downloaded again
    assert fetch("toy", root=root, url=base) == paths
    with pytest.raises(DataFetchError, match="404"):
        fetch("toy", root=root, url=base, force=True)
    assert _files(root) == paths  # the failed forced download kept the good file


def test_fetch_refuses_a_wrong_sha256_and_leaves_nothing(server, toy, tmp_path):
    base, served = server
    (served / "toy").mkdir()
    (served / "toy" / "table.csv").write_bytes(PAYLOAD + b"5,6\n")
    root = tmp_path / "root"
    with pytest.raises(DataFetchError, match="sha256 mismatch") as err:
        fetch("toy", root=root, url=base)
    assert toy.sha256 in str(err.value) and "nothing was written" in str(err.value)
    assert _files(root) == []


def test_fetch_404_is_one_clear_error(server, toy, tmp_path, cli):
    base, _ = server
    root = tmp_path / "root"
    with pytest.raises(DataFetchError, match=r"HTTP 404") as err:
        fetch("toy", root=root, url=base)
    assert f"{base}/toy/table.csv" in str(err.value)
    status, out, errtext = cli(["data", "fetch", "toy", "--root", root, "--url", base])
    assert status == 2 and out == ""
    assert errtext.startswith("frontierbo: error: fetching 'toy': ") and "HTTP 404" in errtext
    assert len(errtext.strip().splitlines()) == 1
    assert _files(root) == []


def test_fetch_without_a_public_url_says_why(toy, tmp_path, cli):
    with pytest.raises(DataFetchError, match="cannot be fetched: made here, never published"):
        fetch("private", root=tmp_path)
    status, _, err = cli(["data", "fetch", "nosuch"])
    assert status == 2 and "unknown dataset 'nosuch'" in err and "toy" in err


def test_real_unpublished_datasets_are_refused_with_their_licence(tmp_path):
    with pytest.raises(DataFetchError, match="cannot be fetched") as err:
        fetch("quantum-reference", root=tmp_path)
    assert "no licence" in str(err.value) and "--url" in str(err.value)
    assert _files(tmp_path) == []


def test_cli_fetch_then_verify(server, toy, tmp_path, cli, monkeypatch):
    base, served = server
    (served / "toy").mkdir()
    (served / "toy" / "table.csv").write_bytes(PAYLOAD)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(DATA_ENV, raising=False)
    status, out, err = cli(["data", "fetch", "toy", "--url", base])
    assert status == 0, err
    landed = tmp_path / "cache" / "frontierbo" / "toy" / "table.csv"
    assert landed.read_bytes() == PAYLOAD and str(landed) in out and "licence: CC0" in out
    status, out, _ = cli(["data", "verify", "toy", "--root", tmp_path / "cache" / "frontierbo"])
    assert status == 0 and out.startswith("ok ") and "1 of 1 files present" in out
    landed.write_bytes(b"changed")
    status, out, err = cli(["data", "verify", "--root", tmp_path / "cache" / "frontierbo"])
    assert status == 2 and "mismatch" in out and "sha256 mismatch" in err and "absent" in out


def test_cli_list_and_where(cli, tmp_path, monkeypatch):
    status, out, _ = cli(["data", "list"])
    assert status == 0
    for name, dataset in registry().items():
        assert f"{name}: " in out and dataset.licence in out
    assert "not fetchable: derived in the project" in out
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "env"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    status, out, _ = cli(["data", "where"])
    assert status == 0
    assert f"{tmp_path / 'env'}  (${DATA_ENV}; absent)" in out
    assert f"{tmp_path / 'cache' / 'frontierbo'}  (user cache; absent)" in out
    assert out.rstrip().endswith(
        f"fetch writes into: {tmp_path / 'env'} (--root to choose another)"
    )
