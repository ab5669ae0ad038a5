"""Slurm with accounting (MariaDB, slurmdbd) against ``sshare``, ``sacctmgr show qos``, ``squeue``, ``sprio``.

The cluster is :mod:`tests.slurm.realslurm` with ``accounting=True``: the accounts, users and QOS of
``realslurm.ACCOUNTING`` (shares 30/10, a sub-account with its own shares and one sharing its
parent's, QOS with priorities, preemption and limits). Jobs run under several accounts and QOS;
the expected values are what Slurm's own commands print at the same moment, nothing is hard-coded
but the job shapes and the account set-up.

What Debian's Slurm 22.05 cannot give hpctop is checked as a gap, not hidden: its slurmrestd
(v0.0.38) serves no ``/shares`` (v0.0.40 brought it), only slurmdbd's associations, and slurmdbd
holds no usage; so RawUsage, EffectvUsage and FairShare stay empty (with a note) while sshare,
which asks slurmctld, shows them.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.slurm.accounting import (
    SACCTMGR_QOS,
    SSHARE,
    SSHARE_FIELDS,
    assert_shares_read_like_sshare,
    qos_values,
    sacctmgr_qos,
    sshare_rows,
)
from tests.slurm.realslurm import RealSlurm, hpctop_cli


@pytest.fixture
def acct(accounting_slurm: RealSlurm) -> Iterator[RealSlurm]:
    yield accounting_slurm
    accounting_slurm.reset()


def _cli(cluster: RealSlurm, *args: str) -> subprocess.CompletedProcess[str]:
    return hpctop_cli(cluster, *args, token=cluster.token())


def _sshare(cluster: RealSlurm) -> list[list[str]]:
    return sshare_rows(cluster.run(list(SSHARE)).stdout)


def _wait(what: str, ready: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(ready) and ready():
            return
        time.sleep(0.3)
    raise AssertionError(f"{what} did not happen in {timeout:.0f} s")


def test_queues_reads_like_sshare_as_far_as_slurmrestd_2205_serves_it(acct: RealSlurm) -> None:
    for account in ("physics", "chemistry", "bio", "theory"):
        acct.sbatch("-A", account, "-n", "2", command="sleep 1")
    _wait("the short jobs' usage in sshare", lambda: not acct.run(["squeue", "-h"]).stdout.strip())
    _wait(
        "usage in sshare", lambda: all(int(r[4] or 0) > 0 for r in _sshare(acct) if r[1] and r[0] != " root")
    )
    sshare = _sshare(acct)
    done = _cli(acct, "queues", "-o", "json")
    text = _cli(acct, "queues")
    assert done.returncode == 0, done.stderr
    assert _sshare(acct) == sshare, "sshare changed while hpctop read"
    assert_shares_read_like_sshare(json.loads(done.stdout), sshare)
    # sshare, asking slurmctld, has real usage here: the gap is shown, not hidden
    assert any(int(r[4]) > 0 for r in sshare if r[1]), "no usage: the gap would not be shown"
    assert "RawUsage, EffectvUsage and FairShare are not served" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    # the text table is sshare's: indented accounts, "parent" for an account sharing its parent's
    lines = text.stdout.splitlines()
    assert lines[0].split() == SSHARE_FIELDS.split(",")
    assert [line.split()[:3] for line in lines[1:] if "parent" in line] == [["theory", "parent", "0.731707"]]
    assert [r[:4] for r in sshare if "parent" in r[2]] == [["  theory", "", "parent", "0.731707"]]


def test_queues_qos_reads_like_sacctmgr_show_qos(acct: RealSlurm) -> None:
    shown = acct.run(list(SACCTMGR_QOS)).stdout
    done = _cli(acct, "queues", "--qos", "-o", "json")
    text = _cli(acct, "queues", "--qos")
    assert done.returncode == 0, done.stderr
    expected = sacctmgr_qos(shown)
    got = qos_values(json.loads(done.stdout))
    assert got == expected
    assert {r[0] for r in expected} == {"normal", "high", "low"}
    high = next(r for r in expected if r[0] == "high")
    assert high[2] == "low" and high[6] == "gres/gpu=4" and high[9] == 3600, "the set-up's limits are missing"
    # the text table prints the wall limit as sacctmgr does
    assert (
        next(line for line in text.stdout.splitlines() if line.startswith("high")).split()[-1]
        == next(line for line in shown.splitlines() if line.startswith("high")).split("|")[-1]
    )


def _fill(cluster: RealSlurm, *, account: str | None = "chemistry") -> list[str]:
    """A job on every CPU, then pending jobs (what sprio lists): under three QOS and accounts, or
    (``account=None``, a cluster without accounting) plain ones."""
    blocker = cluster.sbatch(*(("-A", account) if account else ()), "-N", "3", "-n", "12")
    _wait(
        "the blocker running",
        lambda: "RUNNING" in cluster.run(["squeue", "-h", "-j", blocker, "-o", "%T"]).stdout,
    )
    if account is None:
        return [blocker, cluster.sbatch("-n", "1")]
    return [
        blocker,
        cluster.sbatch("-A", "physics", "--qos=high", "-n", "2"),
        cluster.sbatch("-A", "chemistry", "--qos=low", "-n", "2"),
        cluster.sbatch("-A", "bio", "-n", "2"),
    ]


def test_jobs_qos_and_prio_qos_factor_read_like_squeue_and_sprio(acct: RealSlurm) -> None:
    ids = _fill(acct)
    squeue = dict(line.split("|") for line in acct.run(["squeue", "-h", "-o", "%i|%q"]).stdout.splitlines())
    # sprio -n: %q is the normalised QOS factor, %Y the total
    sprio = {
        line.split("|")[0]: line.split("|")[1:]
        for line in acct.run(["sprio", "-h", "-n", "-o", "%i|%q|%Y"]).stdout.split()
    }
    jobs = _cli(acct, "jobs", "-o", "json")
    prio = _cli(acct, "prio", "-o", "json")
    assert jobs.returncode == 0 and prio.returncode == 0, jobs.stderr + prio.stderr
    assert {r["id"]: r["qos"] for r in json.loads(jobs.stdout)} == squeue
    assert set(squeue) == set(ids) and set(squeue.values()) == {"normal", "high", "low"}
    got = {r["id"]: r for r in json.loads(prio.stdout)}
    assert set(got) == set(sprio) == set(ids[1:])
    for job_id, (factor, total) in sprio.items():
        assert abs(got[job_id]["qos_factor"] - float(factor)) < 1e-6, (job_id, got[job_id], factor)
        assert got[job_id]["priority"] == int(total)
    assert {got[i]["qos_factor"] for i in ids[1:]} == {1.0, 0.1, 0.0}
    assert prio.stderr == ""


def test_without_slurmdbd_qos_and_prio_degrade_to_a_note(slurm: RealSlurm) -> None:
    """The plain cluster: slurmrestd without slurmdbd serves no /slurmdb paths at all."""
    qos = _cli(slurm, "queues", "--qos")
    assert qos.returncode == 1 and qos.stdout == ""
    assert len(qos.stderr.splitlines()) == 1 and "serves no /slurmdb" in qos.stderr, qos.stderr
    pending = _fill(slurm, account=None)[1]
    prio = _cli(slurm, "prio", "-o", "json")
    assert prio.returncode == 0, prio.stderr
    rows = {r["id"]: r for r in json.loads(prio.stdout)}
    assert rows[pending]["qos_factor"] is None  # no QOS to read it from, and no note for what was not asked
    assert prio.stderr == ""


def test_slurmdbd_down_is_a_note_not_a_crash(acct: RealSlurm) -> None:
    """slurmrestd has its accounting plugin, but slurmdbd stopped: Slurm's own error, one line."""
    dbd = acct.daemon("slurmdbd")
    dbd.terminate()
    dbd.wait(timeout=10)
    acct.procs.remove(dbd)
    try:
        qos = _cli(acct, "queues", "--qos")
        shares = _cli(acct, "queues")
        prio = _cli(acct, "prio", "-o", "json")
    finally:
        acct.start_slurmdbd()  # the module's cluster stays whole for whatever runs after
    for done in (qos, shares):
        assert done.returncode == 1 and done.stdout == "", done.stdout
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert "Slurm: slurmrestd 500" in done.stderr and "slurmdbd" in done.stderr, done.stderr
    assert prio.returncode == 0, prio.stderr
    assert "no QOS factors" in prio.stderr and len(prio.stderr.splitlines()) == 1
