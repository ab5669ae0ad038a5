"""slurmrestd v0.0.42 and v0.0.44 (what Slinky ships) from recorded responses: shapes proven upstream's,
decoded into the same neutral model as Debian's v0.0.38.

The expected values follow from the responses and Slurm's documented meanings: a node state list
``["IDLE", "DRAIN"]`` is sinfo's ``drained``, ``["MIXED", "COMPLETING"]`` a node still cleaning up
a job (sinfo ``completing``), ``NOT_RESPONDING`` sinfo's ``*`` suffix; a job state list
``["RUNNING", "COMPLETING"]`` is squeue's ``COMPLETING``; a ``{"set": false}`` share is
``RawShares parent`` in sshare; ``maximums.time: {"infinite": true}`` is ``infinite`` in sinfo.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from hpctop.sources.slurm.rest import SlurmError, SlurmRest
from tests.slurm.recorded import TOKEN, RecordedSlurm, load, validate

VERSIONS = ("v0.0.42", "v0.0.44")


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_responses_follow_the_upstream_schemas(version: str) -> None:
    openapi, responses = load(version)
    assert openapi["source"]["repository"] == "github.com/SlinkyProject/slurm-client"
    schemas = openapi["schemas"]
    for name, schema_name in openapi["responses"].items():
        errors = validate(responses[name], schemas[schema_name], schemas, name)
        assert errors == [], errors
    # the validator is not a rubber stamp: an unknown key and a wrong type are caught
    broken = copy.deepcopy(responses["nodes"])
    broken["nodes"][0]["gpus"] = 4
    broken["nodes"][0]["cpus"] = "16"
    found = validate(broken, schemas[openapi["responses"]["nodes"]], schemas, "nodes")
    assert found == [
        "nodes.nodes[0].cpus: str where the schema says integer",
        "nodes.nodes[0].gpus: not in the schema",
    ]


def _client(server: RecordedSlurm) -> SlurmRest:
    return SlurmRest(server.url, user="alice", token=TOKEN)


@pytest.mark.parametrize("version", VERSIONS)
def test_negotiates_and_decodes_the_newer_shapes(version: str) -> None:
    with RecordedSlurm(version) as server:
        client = _client(server)
        assert client.negotiate() == version
        jobs = {j.job_id: j for j in client.jobs()}
        nodes = {n.name: n for n in client.nodes()}
        partitions = {p.name: p for p in client.partitions()}
        shares = client.shares()
        reservations = client.reservations()
    # v0.0.42+ spells collections with a trailing slash; the client asks for them as served
    assert ("GET", f"/slurm/{version}/nodes/") in server.seen
    assert jobs[101].state == "RUNNING" and jobs[101].priority == 4294 and jobs[101].nodes == "slinky-[0-1]"
    assert jobs[102].reason == "Resources" and jobs[102].start_time == 1798761600 + 3660
    assert jobs[104].reason == "JobHeldUser" and jobs[104].priority == 0
    assert jobs[106].state == "COMPLETING" and (jobs[106].array_job_id, jobs[106].array_task_id) == (105, 1)
    assert jobs[102].array_task_id is None  # {"set": false}: not an array task
    assert {name: n.sinfo_state for name, n in nodes.items()} == {
        "slinky-0": "allocated",
        "slinky-1": "mixed",
        "slinky-2": "completing",
        "slinky-3": "drained",
        "slinky-4": "down*",
    }
    assert (nodes["slinky-0"].gpus, nodes["slinky-0"].gpus_used, nodes["slinky-2"].gpus_used) == (4, 4, 2)
    assert nodes["slinky-3"].reason == "nvidia-smi failed" and nodes["slinky-3"].reason_user == "root"
    gpu = partitions["gpu"]
    assert (gpu.priority_tier, gpu.priority_job_factor, gpu.max_time_min, gpu.state) == (2, 10, 1440, "UP")
    assert partitions["slinky"].max_time_min is None and partitions["slinky"].total_nodes == 4
    assert [(s.account, s.user, s.raw_shares) for s in shares] == [
        ("root", "", 1),
        ("research", "", 60),
        ("research", "alice", 1),
        ("ml", "", 40),
        ("ml", "bob", None),
    ]
    assert shares[2].fairshare == 0.5 and shares[1].norm_shares == 0.6
    assert reservations[0].name == "maint-window" and reservations[0].flags == ("MAINT", "SPEC_NODES")


def test_a_malformed_entry_is_skipped_and_counted() -> None:
    _, responses = load("v0.0.44")
    responses = copy.deepcopy(responses)
    responses["nodes"]["nodes"].append({"state": ["IDLE"]})  # no name
    responses["nodes"]["nodes"].append("slinky-9")  # not an object
    with RecordedSlurm("v0.0.44", responses=responses) as server:
        client = _client(server)
        assert len(client.nodes()) == 5
    assert client.skipped == {"nodes": 2}


def _hpctop(server: RecordedSlurm, *args: str, token: str = TOKEN) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "KUBECONFIG"))}
    env |= {"SLURM_JWT": token, "HPCTOP_NO_CACHE": "1"}
    argv = [sys.executable, "-m", "hpctop", *args, "--slurm-url", server.url, "--slurm-user", "alice"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_queues_reads_like_sshare() -> None:
    with RecordedSlurm("v0.0.44") as server:
        table = _hpctop(server, "queues")
        rows = json.loads(_hpctop(server, "queues", "-o", "json").stdout)
    assert table.returncode == 0, table.stderr
    # sshare's columns and tree: one space of indent per level, a user one level below its account
    assert table.stdout.splitlines() == [
        "Account     User   RawShares  NormShares  RawUsage  EffectvUsage  FairShare",
        "root                       1    1.000000   3600000      1.000000   1.000000",
        " ml                       40    0.400000   1080000      0.300000   0.000000",
        "  ml        bob       parent               1080000      0.300000   1.000000",
        " research                 60    0.600000   2520000      0.700000   0.000000",
        "  research  alice          1    1.000000   2520000      0.700000   0.500000",
    ]
    assert [(r["account"], r["user"], r["depth"]) for r in rows] == [
        ("root", None, 0),
        ("ml", None, 1),
        ("ml", "bob", 2),
        ("research", None, 1),
        ("research", "alice", 2),
    ]


def test_a_refused_token_is_one_line_and_nothing_else() -> None:
    with RecordedSlurm("v0.0.44") as server:
        done = _hpctop(server, "nodes", token="wrong")
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "401" in done.stderr


def test_v0038_has_no_shares_and_says_which_version_brought_them() -> None:
    _, responses = load("v0.0.44")
    with RecordedSlurm("v0.0.44", responses=responses) as server:
        client = _client(server)
        client.negotiate()
        client.served = frozenset(p for p in client.served if "/shares" not in p)  # as v0.0.38 serves
        with pytest.raises(SlurmError, match=r"came with v0\.0\.40"):
            client.shares()


def _strip(rows: list[dict[str, Any]], *keys: str) -> list[tuple[Any, ...]]:
    return [tuple(r[k] for k in keys) for r in rows]


def test_nodes_and_prio_from_a_newer_version() -> None:
    with RecordedSlurm("v0.0.44") as server:
        per_node = json.loads(_hpctop(server, "nodes", "-N", "-o", "json").stdout)
        prio = json.loads(_hpctop(server, "prio", "-o", "json").stdout)
    assert ("slinky-3", "slinky", "drained", 0, 0, 16, 16) in _strip(
        per_node, "node", "partition", "state", "cpus_alloc", "cpus_idle", "cpus_other", "cpus_total"
    )
    # sprio's set: pending and not held (104 is held, priority 0)
    assert _strip(prio, "id", "priority") == [("102", 4100), ("103", 3900)]
