"""Session-scoped real Slurm for the Slurm tests; they skip with one line saying how to install it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.slurm.realslurm import RealSlurm, missing


@pytest.fixture(scope="session")
def real_slurm() -> Iterator[RealSlurm]:
    why = missing()
    if why is not None:
        pytest.skip(why)
    # not pytest's tmp_path: its parents are 0700, and slurmrestd runs as nobody
    root = Path(tempfile.mkdtemp(prefix="hpctop-slurm-"))
    cluster = RealSlurm(root)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def slurm(real_slurm: RealSlurm) -> Iterator[RealSlurm]:
    """The session's Slurm, emptied of jobs and drains afterwards (the next test needs the nodes)."""
    yield real_slurm
    real_slurm.reset()
