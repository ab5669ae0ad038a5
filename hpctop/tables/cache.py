"""Answers of the simulated cluster kept on disk, so ``hpctop jobs --demo --at 3600`` answers at once.

The demo and scenario clusters are deterministic: the same hpctop, seed, scenario, ``--at`` and
arguments give the same bytes (the byte-identity tests hold it). Reaching ``--at 3600`` costs
seconds of simulation, so the rendered answer is kept in the user's cache directory and a repeated
command reads it back (issue 15: a squeue user expects well under a second).

What keeps a cached answer honest:

- the key holds the hpctop version, a fingerprint of hpctop's own files (every source and data
  file of the package, by content: an edited checkout never reads an answer of its old code), the
  Python version, the command with all its arguments, every setting, and the content of a
  scenario file; the key is stored in the file and compared whole on reading, so a file of
  another key (a hash collision, a copied file) is never used;
- a file that cannot be read, is not hpctop's format, or was written by another user is ignored
  (and replaced on the next miss); nothing in it is executed (JSON, not pickle);
- files are written atomically (a temporary file renamed into place) with mode 0600 in a
  directory made 0700; at most :data:`KEEP` answers are kept, the oldest removed.

Where: ``$HPCTOP_CACHE_DIR``, else ``$XDG_CACHE_HOME/hpctop``, else ``~/.cache/hpctop``. Bypass:
``--no-cache`` or ``HPCTOP_NO_CACHE=1``. Live clusters and replays are never cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

import hpctop

#: bumped when the file layout changes
FORMAT = 1
#: answers kept; older ones are removed on each write
KEEP = 32
_PACKAGE = Path(hpctop.__file__).resolve().parent
_fingerprint: str | None = None


def disabled() -> bool:
    """Whether ``HPCTOP_NO_CACHE`` asks to bypass the cache."""
    return os.environ.get("HPCTOP_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


def cache_dir() -> Path:
    """``$HPCTOP_CACHE_DIR``, else ``$XDG_CACHE_HOME/hpctop``, else ``~/.cache/hpctop``."""
    explicit = os.environ.get("HPCTOP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hpctop"


def source_fingerprint(root: Path = _PACKAGE) -> str:
    """A hash of every file of the hpctop package (path and content), bytecode left out."""
    global _fingerprint
    if root == _PACKAGE and _fingerprint is not None:
        return _fingerprint
    digest = hashlib.blake2b(digest_size=20)
    for path in sorted(_files(root)):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    value = digest.hexdigest()
    if root == _PACKAGE:
        _fingerprint = value
    return value


def _files(root: Path) -> list[Path]:
    out: list[Path] = []
    for entry in os.scandir(root):
        if entry.name == "__pycache__" or entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            out.extend(_files(Path(entry.path)))
        elif entry.is_file(follow_symlinks=False) and not entry.name.endswith((".pyc", ".pyo")):
            out.append(Path(entry.path))
    return out


def make_key(request: Mapping[str, Any]) -> dict[str, Any]:
    """The whole key of an answer: this hpctop (version, files, Python) and the request."""
    return {
        "format": FORMAT,
        "version": hpctop.__version__,
        "source": source_fingerprint(),
        "python": list(sys.version_info[:3]),
        "request": dict(request),
    }


def _path_for(key: Mapping[str, Any], directory: Path) -> Path:
    blob = orjson.dumps(key, option=orjson.OPT_SORT_KEYS, default=str)
    return directory / (hashlib.sha256(blob).hexdigest() + ".json")


def _same(key: Mapping[str, Any], stored: object) -> bool:
    normal = orjson.loads(orjson.dumps(key, option=orjson.OPT_SORT_KEYS, default=str))
    return bool(stored == normal)


def load(key: Mapping[str, Any], directory: Path | None = None) -> str | None:
    """The answer stored under ``key``, or None (missing, unreadable, foreign or not ours)."""
    path = _path_for(key, directory or cache_dir())
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        stored = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(stored, dict) or not _same(key, stored.get("key")):
        return None
    answer = stored.get("answer")
    return answer if isinstance(answer, str) else None


def store(key: Mapping[str, Any], answer: str, directory: Path | None = None) -> Path | None:
    """Keep ``answer`` under ``key`` (atomically, 0600 in a 0700 directory); None when it cannot."""
    where = directory or cache_dir()
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = where.stat()
        if info.st_uid != os.getuid():
            return None  # someone else's directory: do not write answers there
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(where, 0o700)
        path = _path_for(key, where)
        blob = orjson.dumps({"key": key, "answer": answer}, option=orjson.OPT_SORT_KEYS, default=str)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".json")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(where)
        return path
    except OSError:
        return None  # a read-only or full disk costs the speed-up, never the answer


def _prune(where: Path) -> None:
    answers = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in answers[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()


__all__ = ["cache_dir", "disabled", "load", "make_key", "source_fingerprint", "store"]
