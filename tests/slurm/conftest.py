"""The real Slurms of the Slurm tests (plain: session-scoped; with accounting: per module); they skip
with one line saying how to install what is missing."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.slurm.realslurm import RealSlurm, missing


def _started(*, accounting: bool) -> Iterator[RealSlurm]:
    why = missing(accounting=accounting)
    if why is not None:
        pytest.skip(why)
    # not pytest's tmp_path: its parents are 0700, and slurmrestd runs as nobody
    root = Path(tempfile.mkdtemp(prefix="hpctop-slurmdbd-" if accounting else "hpctop-slurm-"))
    cluster = RealSlurm(root, accounting=accounting)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def real_slurm() -> Iterator[RealSlurm]:
    yield from _started(accounting=False)


@pytest.fixture(scope="module")
def accounting_slurm() -> Iterator[RealSlurm]:
    """A real Slurm with accounting (MariaDB, slurmdbd, the accounts of ``realslurm.ACCOUNTING``),
    for one module: it is started only where asked for and stopped when that module is done."""
    yield from _started(accounting=True)


@pytest.fixture
def slurm(real_slurm: RealSlurm) -> Iterator[RealSlurm]:
    """The session's Slurm, emptied of jobs and drains afterwards (the next test needs the nodes)."""
    yield real_slurm
    real_slurm.reset()
