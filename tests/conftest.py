"""Test-wide set-up: the answer cache of ``hpctop jobs --demo`` goes to a temporary directory;
``private_env`` keeps a test's settings from the developer's shell and home; each test leaves
the cyclic GC as it found it (``gc_as_found``); every test under ``tests/slurm`` runs on one
pytest-xdist worker (``xdist_group("slurm")``).

The CLI keeps answers of the simulated cluster in the user's cache directory
(:mod:`hpctop.tables.cache`); no test may read or fill the real one. ``XDG_CACHE_HOME`` is set
rather than ``HPCTOP_CACHE_DIR`` because several tests clear every ``HPCTOP_*`` variable. Under
pytest-xdist each worker runs ``pytest_configure`` itself, so each has its own cache directory.

``make test`` runs the suite twice: on two workers (``-n 2 --dist loadgroup``) all but the
``serial`` tests, then the ``serial`` ones alone (tests/README.md, "How the tests run"). The Slurm
tests share one real Slurm per process (``real_slurm`` is session-scoped, its daemons take seconds
to start and reset between tests): grouped on one worker, one Slurm is started, not two.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpctop.runtime import heap

_made: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    directory = tempfile.mkdtemp(prefix="hpctop-test-cache-")
    _made.append(directory)
    os.environ["XDG_CACHE_HOME"] = directory
    os.environ.pop("HPCTOP_CACHE_DIR", None)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slurm = Path(__file__).parent / "slurm"
    for item in items:
        if item.path.is_relative_to(slurm):
            item.add_marker(pytest.mark.xdist_group("slurm"))


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


@pytest.fixture(autouse=True)
def gc_as_found() -> Iterator[None]:
    """A test that froze the heap (``bench.live_app.live_session`` settles it the way a synced
    console does, and never closes) or raised the young threshold leaves neither to the next
    test: ``gc.freeze()`` and the thresholds are process-wide, and a later test that counts young
    containers or frozen objects (tests/sources/test_session_gc.py) would read the earlier
    test's heap, not its own."""
    threshold = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    yield
    if frozen_before == 0 and gc.get_freeze_count():
        heap.unfreeze()
    gc.set_threshold(*threshold)
