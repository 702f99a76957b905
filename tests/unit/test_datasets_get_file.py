"""``keras.utils.get_file``: cache hits, verified downloads, Keras 3's extraction names, safe archives."""

from __future__ import annotations

import hashlib
import io
import tarfile
import urllib.error
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

import unison as tf
from unison.errors import DatasetError
from unison.keras.utils import file_utils, get_file

URL = "https://example.org/files/notes.txt"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[dict[str, bytes]], list[str]]:
    """Serve ``files`` (URL -> body) through urlopen; any other URL fails like an absent network."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))

    def serve(files: dict[str, bytes]) -> list[str]:
        requests: list[str] = []

        class _Response(io.BytesIO):
            def __init__(self, body: bytes) -> None:
                super().__init__(body)
                self.headers = {"Content-Length": str(len(body))}

        def urlopen(url: str, timeout: float | None = None) -> _Response:
            requests.append(url)
            if url not in files:
                raise urllib.error.URLError("network disabled in tests")
            return _Response(files[url])

        monkeypatch.setattr(file_utils.urllib.request, "urlopen", urlopen)
        return requests

    return serve


def test_exported_like_keras() -> None:
    assert tf.keras.utils.get_file is get_file


def test_downloads_once_then_uses_cache(served: Callable[..., list[str]], tmp_path: Path) -> None:
    requests = served({URL: b"hello"})
    sha = hashlib.sha256(b"hello").hexdigest()
    path = get_file(origin=URL, file_hash=sha)
    assert path == str(tmp_path / "keras" / "datasets" / "notes.txt")
    assert Path(path).read_bytes() == b"hello"
    assert get_file("notes.txt", URL, file_hash=sha) == path
    assert requests == [URL]  # the second call was a cache hit


def test_cache_dir_subdir_and_md5(served: Callable[..., list[str]], tmp_path: Path) -> None:
    requests = served({URL: b"abc"})
    md5 = hashlib.md5(b"abc").hexdigest()
    path = get_file("n.txt", URL, md5_hash=md5, cache_dir=tmp_path / "c", cache_subdir="sub")
    assert path == str(tmp_path / "c" / "sub" / "n.txt") and requests == [URL]
    absolute = get_file("m.txt", URL, cache_subdir=str(tmp_path / "abs"))
    assert absolute == str(tmp_path / "abs" / "m.txt")


def test_stale_cached_file_is_fetched_again(
    served: Callable[..., list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = served({URL: b"new"})
    target = tmp_path / "keras" / "datasets" / "notes.txt"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"old")
    assert get_file(origin=URL) == str(target) and requests == []  # no hash: any cached copy does
    get_file(origin=URL, file_hash=hashlib.sha256(b"new").hexdigest())
    assert target.read_bytes() == b"new" and requests == [URL]
    assert "hash does not match" in capsys.readouterr().err
    get_file(origin=URL, force_download=True)
    assert requests == [URL, URL]


def test_hash_mismatch_keeps_nothing(served: Callable[..., list[str]], tmp_path: Path) -> None:
    served({URL: b"tampered"})
    with pytest.raises(DatasetError, match="does not match its expected hash") as info:
        get_file(origin=URL, file_hash="0" * 64)
    assert "received: " + hashlib.sha256(b"tampered").hexdigest() in str(info.value)
    assert not (tmp_path / "keras" / "datasets" / "notes.txt").exists()
    assert list((tmp_path / "keras" / "datasets").iterdir()) == []  # no temporary file left either


def test_download_failure_says_where_to_put_the_file(served: Callable[..., list[str]], tmp_path: Path) -> None:
    served({})
    with pytest.raises(DatasetError) as info:
        get_file("x.bin", "https://example.org/x.bin")
    msg = str(info.value)
    assert "https://example.org/x.bin" in msg and "network disabled in tests" in msg
    assert f"place it at {tmp_path / 'keras' / 'datasets' / 'x.bin'}" in msg


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fname": "a.txt"}, "needs origin="),
        ({"origin": "https://example.org/"}, "names no file"),
        ({"fname": "sub/a.txt", "origin": URL}, "must be a file name, not a path"),
        ({"origin": URL, "hash_algorithm": "sha1"}, "hash_algorithm='sha1' is not supported"),
    ],
)
def test_argument_errors(served: Callable[..., list[str]], kwargs: dict[str, str], message: str) -> None:
    served({})
    with pytest.raises(ValueError, match=message):
        get_file(**kwargs)


def _tarball(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            t.addfile(info, io.BytesIO(body))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            t.addfile(info)
    return buf.getvalue()


def test_extract_names_as_keras3(served: Callable[..., list[str]], tmp_path: Path) -> None:
    body = _tarball({"flower_photos/daisy/1.jpg": b"jpg"})
    served({"https://example.org/flower_photos.tgz": body})
    folder = get_file("flower_photos", origin="https://example.org/flower_photos.tgz", extract=True)
    root = tmp_path / "keras" / "datasets"
    assert folder == str(root / "flower_photos")
    assert (root / "flower_photos" / "flower_photos" / "daisy" / "1.jpg").read_bytes() == b"jpg"
    assert (root / "flower_photos_archive").is_file()
    dotted = get_file("photos.tar.gz", origin="https://example.org/flower_photos.tgz", untar=True)
    assert dotted == str(root / "photos_extracted") and (root / "photos.tar.gz").is_file()
    assert (root / "photos_extracted" / "flower_photos" / "daisy" / "1.jpg").is_file()


def test_tar_path_traversal_and_links_are_skipped(served: Callable[..., list[str]], tmp_path: Path) -> None:
    body = _tarball(
        {"ok/a.txt": b"a", "../escaped.txt": b"x", "/tmp/absolute-unison-test.txt": b"x"},
        links={"ok/passwd": "/etc/passwd", "ok/up": "../../../outside", "ok/same": "a.txt"},
    )
    served({"https://example.org/a.tar.gz": body})
    with pytest.warns(UserWarning, match="Skipping archive member") as record:
        folder = Path(get_file("a", origin="https://example.org/a.tar.gz", extract=True))
    skipped = " ".join(str(w.message) for w in record)
    for name in ("../escaped.txt", "/tmp/absolute-unison-test.txt", "ok/passwd", "ok/up"):
        assert repr(name) in skipped, name
    assert (folder / "ok" / "a.txt").read_bytes() == b"a" and (folder / "ok" / "same").read_bytes() == b"a"
    assert not (folder.parent / "escaped.txt").exists() and not (folder / "ok" / "passwd").exists()
    assert not Path("/tmp/absolute-unison-test.txt").exists()


def test_zip_extraction_and_traversal(served: Callable[..., list[str]], tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("data/x.csv", "1,2\n")
        z.writestr("../../evil.txt", "x")
    served({"https://example.org/d.zip": buf.getvalue()})
    with pytest.warns(UserWarning, match="'../../evil.txt'"):
        folder = Path(get_file("d.zip", origin="https://example.org/d.zip", extract=True))
    assert folder.name == "d_extracted" and (folder / "data" / "x.csv").read_text() == "1,2\n"
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "keras" / "evil.txt").exists()


def test_not_an_archive_warns(served: Callable[..., list[str]]) -> None:
    served({URL: b"plain text"})
    with pytest.warns(UserWarning, match="Could not extract archive"):
        get_file("notes", origin=URL, extract=True)


def test_copy_in_data_dir_replaces_the_download(
    served: Callable[..., list[str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    requests = served({})
    monkeypatch.setenv("UNISON_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "shakespeare.txt").write_bytes(b"To be")
    url = "https://example.org/data/shakespeare.txt"
    assert get_file("shakespeare.txt", url) == str(tmp_path / "data" / "shakespeare.txt")
    (tmp_path / "data" / "photos.tgz").write_bytes(_tarball({"photos/a.jpg": b"a"}))
    folder = get_file("photos", origin="https://example.org/photos.tgz", untar=True)
    assert (Path(folder) / "photos" / "a.jpg").read_bytes() == b"a" and requests == []
    with pytest.warns(UserWarning, match="its hash does not match"), pytest.raises(DatasetError, match="network"):
        get_file("shakespeare.txt", url, file_hash="0" * 64)
