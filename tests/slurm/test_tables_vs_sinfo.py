"""``hpctop nodes``/``prio``/``queues --slurm-url`` against the real Slurm's ``sinfo``/``sprio``.

The nodes are put in each state sinfo can show here: one allocated whole (a job on all its CPUs), one
mixed (a one-CPU job), one drained with a reason. The expected values are sinfo's and sprio's own
output read at the same moment; nothing is hard-coded but the job shapes and the drain.

``sshare`` cannot be compared here: Debian 12's slurmrestd (v0.0.38) serves no ``/shares`` (it
came with v0.0.40) and sshare needs slurmdbd, which this session-wide cluster does not run; the
accounting cluster of ``test_accounting_real.py`` does, and compares it there. Here only the plain
refusal of a slurmrestd without slurmdbd is checked.
"""

from __future__ import annotations

import json
import time

from tests.slurm.realslurm import RealSlurm, hpctop_cli

SINFO_NODE = "%N|%P|%T|%C|%G|%E"
SINFO_SUMMARY = "%P|%a|%l|%D|%t|%N"


def _sinfo(cluster: RealSlurm, fmt: str, *extra: str) -> list[str]:
    return sorted(cluster.run(["sinfo", "-h", *extra, "-o", fmt]).stdout.splitlines())


def _states_settled(cluster: RealSlurm) -> list[str]:
    deadline = time.monotonic() + 20
    rows = _sinfo(cluster, "%N %T", "-N")
    while time.monotonic() < deadline:
        states = {line.split()[1] for line in rows}
        if {"allocated", "mixed", "drained"} <= states:
            break
        time.sleep(0.3)
        rows = _sinfo(cluster, "%N %T", "-N")
    return rows


def test_nodes_read_like_sinfo(slurm: RealSlurm) -> None:
    slurm.sbatch("-N", "1", "-n", "4", "-w", "sn1")  # every CPU of sn1: allocated
    slurm.sbatch("-N", "1", "-n", "1", "-w", "sn2")
    slurm.run(["scontrol", "update", "nodename=sn3", "state=drain", "reason=hpctop drain test"])
    _states_settled(slurm)
    per_node = _sinfo(slurm, SINFO_NODE, "-N")
    summary = _sinfo(slurm, SINFO_SUMMARY)
    done = hpctop_cli(slurm, "nodes", "-N", "-o", "json", token=slurm.token())
    done_summary = hpctop_cli(slurm, "nodes", "-o", "json", token=slurm.token())
    assert _sinfo(slurm, SINFO_NODE, "-N") == per_node, "sinfo changed while hpctop read"
    assert done.returncode == 0, done.stderr
    assert done_summary.returncode == 0, done_summary.stderr
    got = sorted(
        f"{r['node']}|{r['partition']}|{r['state']}|"
        f"{r['cpus_alloc']}/{r['cpus_idle']}/{r['cpus_other']}/{r['cpus_total']}|"
        f"{r['gres']}|{r['reason'] or 'none'}"
        for r in json.loads(done.stdout)
    )
    assert got == per_node
    assert {line.split("|")[2] for line in per_node} == {"allocated", "mixed", "drained"}
    got_summary = sorted(
        f"{r['partition']}|{r['avail']}|{r['timelimit']}|{r['nodes']}|{r['state_compact']}|{r['nodelist']}"
        for r in json.loads(done_summary.stdout)
    )
    assert got_summary == summary
    # the text table prints sinfo's words, the drain reason included
    table = hpctop_cli(slurm, "nodes", "-N", token=slurm.token()).stdout
    assert "hpctop drain test" in table and "drained" in table and "4/0/0/4" in table
    # -t filters by sinfo's state words (a prefix, as sinfo -t drain matches drained and draining)
    drained = hpctop_cli(slurm, "nodes", "-N", "-t", "drain", "-o", "json", token=slurm.token())
    assert [r["node"] for r in json.loads(drained.stdout)] == ["sn3"]


def test_prio_lists_what_sprio_lists(slurm: RealSlurm) -> None:
    first = slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    held = slurm.sbatch("-H", "-p", "debug", "-t", "5")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if slurm.run(["squeue", "-h", "-t", "R", "-o", "%i"]).stdout.split() == [first]:
            break
        time.sleep(0.3)
    sprio = _sinfo_sprio(slurm)
    done = hpctop_cli(slurm, "prio", "-o", "json", token=slurm.token())
    assert done.returncode == 0, done.stderr
    assert _sinfo_sprio(slurm) == sprio, "sprio changed while hpctop read"
    rows = json.loads(done.stdout)
    assert len(sprio) == 2  # the two pending jobs; the running one and the held one are not listed
    assert sorted(f"{r['id']}|{r['partition']}|{r['user']}|{r['priority']}" for r in rows) == sprio
    assert held not in {r["id"] for r in rows}
    assert all(r["factors"] is None for r in rows)  # slurmrestd serves no factors: not guessed


def _sinfo_sprio(cluster: RealSlurm) -> list[str]:
    # %i job id, %r partition, %u user, %Y priority (sprio's total)
    return sorted(cluster.run(["sprio", "-h", "-o", "%i|%r|%u|%Y"]).stdout.split())


def test_queues_says_the_server_serves_no_shares(slurm: RealSlurm) -> None:
    done = hpctop_cli(slurm, "queues", token=slurm.token())
    assert done.returncode == 1
    assert done.stdout == ""
    assert "serves no shares" in done.stderr and "v0.0.40" in done.stderr
