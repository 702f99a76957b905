"""``keras.utils.get_file`` on unison against Keras 3.15 and Keras 2 (tf_keras) on TF 2.21: files served
by a local HTTP server (a thread on 127.0.0.1), kept in a cache folder, checked by hash, and tar/zip
archives extracted. What is compared: the returned path (relative to the cache folder), the files
the cache then holds and their contents."""

from __future__ import annotations

from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


class _Server:
    """A folder served over HTTP on 127.0.0.1 by a thread, for the duration of a ``with``."""

    def __enter__(self):
        import functools
        import http.server
        import os
        import tempfile
        import threading

        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "served")
        self.cache = os.path.join(self.tmp.name, "cache")
        os.makedirs(self.root)
        os.makedirs(self.cache)  # (Keras writes into /tmp/.keras when cache_dir does not exist yet)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # the test's output stays clean
                pass

        handler = functools.partial(Quiet, directory=self.root)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.proxies = {k: os.environ.pop(k, None) for k in ("http_proxy", "HTTP_PROXY", "https_proxy")}
        return self

    def __exit__(self, *exc):
        import os

        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)
        for k, v in self.proxies.items():
            if v is not None:
                os.environ[k] = v
        self.tmp.cleanup()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"

    def write(self, name: str, data: bytes) -> str:
        import os

        with open(os.path.join(self.root, name), "wb") as f:
            f.write(data)
        return name

    def archive(self, name: str, kind: str) -> str:
        import io
        import os
        import tarfile
        import zipfile

        files = {"pkg/a.txt": b"alpha\n", "pkg/sub/b.txt": b"beta\n"}
        path = os.path.join(self.root, name)
        if kind == "zip":
            with zipfile.ZipFile(path, "w") as z:
                for n, data in files.items():
                    z.writestr(n, data)
        else:
            with tarfile.open(path, "w:gz") as t:
                for n, data in files.items():
                    info = tarfile.TarInfo(n)
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
        return name

    def listing(self):
        """Every file under the cache folder with its bytes (paths relative to the folder)."""
        import os

        out = {}
        for top, _, names in os.walk(self.cache):
            for n in names:
                full = os.path.join(top, n)
                rel = os.path.relpath(full, self.cache)
                if not os.path.isdir(full):
                    with open(full, "rb") as f:
                        data = f.read()
                    # archives carry their creation time: their sizes are compared
                    archive = n.endswith((".gz", ".zip", "_archive"))
                    out[rel] = f"{len(data)} bytes" if archive or len(data) >= 200 else data
        return out

    def rel(self, path) -> str:
        import os

        return os.path.relpath(str(path), self.cache)


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _md5(data: bytes) -> str:
    import hashlib

    return hashlib.md5(data).hexdigest()


@same_as_tf("keras:utils.get_file", dialects=BOTH)
def test_get_file_downloads_caches_and_checks_hashes(tf):
    data = bytes(range(256)) * 3
    with _Server() as s:
        s.write("data.bin", data)
        get = tf.keras.utils.get_file
        first = get("data.bin", s.url("data.bin"), cache_dir=s.cache, file_hash=_sha256(data))
        # a second call finds the file in the cache (the server's copy changed: not fetched again)
        s.write("data.bin", b"changed")
        again = get("data.bin", s.url("data.bin"), cache_dir=s.cache, file_hash=_sha256(data))
        md5 = get("other.bin", s.url("data.bin"), cache_dir=s.cache, md5_hash=_md5(b"changed"), cache_subdir="sub")
        named = get(origin=s.url("data.bin"), cache_dir=s.cache, cache_subdir="by_url")
        return s.rel(first), s.rel(again), s.rel(md5), s.rel(named), s.listing()


@same_as_tf("keras:utils.get_file")
def test_get_file_extracts_tar_and_zip(tf):
    with _Server() as s:
        s.archive("bundle.tar.gz", "tar")
        s.archive("bundle.zip", "zip")
        get = tf.keras.utils.get_file
        tar = get("bundle.tar.gz", s.url("bundle.tar.gz"), cache_dir=s.cache, extract=True)
        zipped = get("bundle.zip", s.url("bundle.zip"), cache_dir=s.cache, extract=True, archive_format="zip")
        untarred = get("legacy", s.url("bundle.tar.gz"), cache_dir=s.cache, untar=True)
        return s.rel(tar), s.rel(zipped), s.rel(untarred), s.listing()


@same_as_tf(
    "tf_keras:utils.get_file",
    dialects=("tf_keras",),
    differs="get_file(extract=True) follows Keras 3 (extracts into '<name>_extracted/' and returns that "
    "folder); tf_keras extracts beside the archive and returns the archive's path: only untar=True's "
    "returned path, which both give, is compared in Keras 2's dialect",
)
def test_get_file_untar_in_keras2(tf):
    with _Server() as s:
        s.archive("bundle.tar.gz", "tar")
        untarred = tf.keras.utils.get_file("legacy", s.url("bundle.tar.gz"), cache_dir=s.cache, untar=True)
        return s.rel(untarred)


@same_as_tf(
    "keras:utils.get_file",
    edge=True,
    dialects=BOTH,
    differs="a download that fails its hash check is not kept by unison (Keras leaves it in the cache, "
    "where a later call without a hash would take it): the errors are compared, not the cache's files",
)
def test_get_file_wrong_hash_missing_origin_and_no_origin(tf, dialect):
    out = []
    with _Server() as s:
        s.write("data.bin", b"payload")
        get = tf.keras.utils.get_file
        calls = [
            (lambda: get("data.bin", s.url("data.bin"), cache_dir=s.cache, file_hash="0" * 64), True),
            (lambda: get("gone.bin", s.url("gone.bin"), cache_dir=s.cache), False),
            (lambda: get("data.bin", None, cache_dir=s.cache), True),
        ]
        if dialect == "keras":  # Keras 3 refuses a path as fname (tf_keras writes into the subfolder)
            calls.append((lambda: get("a/b.bin", s.url("data.bin"), cache_dir=s.cache), True))
        for call, value_error in calls:
            try:
                out.append(s.rel(call()))
            except Exception as exc:  # Keras raises a bare Exception for a failed fetch (unison a ValueError)
                out.append(("error", isinstance(exc, ValueError) if value_error else None))
    return out
