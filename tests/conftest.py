"""Test-wide set-up: the answer cache of ``hpctop jobs --demo`` goes to a temporary directory;
``private_env`` keeps a test's settings from the developer's shell and home.

The CLI keeps answers of the simulated cluster in the user's cache directory
(:mod:`hpctop.tables.cache`); no test may read or fill the real one. ``XDG_CACHE_HOME`` is set
rather than ``HPCTOP_CACHE_DIR`` because several tests clear every ``HPCTOP_*`` variable.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_made: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    directory = tempfile.mkdtemp(prefix="hpctop-test-cache-")
    _made.append(directory)
    os.environ["XDG_CACHE_HOME"] = directory
    os.environ.pop("HPCTOP_CACHE_DIR", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory in _made:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def private_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No HPCTOP_* from the developer's shell, and a private XDG config home."""
    for name in list(os.environ):
        if name.startswith("HPCTOP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
