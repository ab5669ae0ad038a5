"""The 2026 gangs and topology (issue 13 items 3-7), read as a user's ``hpctop jobs`` reads a cluster.

Why: a native PodGroup gang, a TAS-admitted and a TAS-failed Kueue workload, a MultiKueue
workload and Volcano HyperNode jobs must each show the right GPUs, queue, gang, state and reason,
and their placement over the topology. The corpus (``tests/fixtures/gangs_2026/``, every case
naming the upstream file and commit it follows) is served by the fake API server as a real one
serves it (list items without apiVersion/kind, managedFields, per-version discovery: the native
PodGroup at ``scheduling.k8s.io/v1beta1`` beside PriorityClass ``v1``) and read through the live
path, with the live-truth corpus's reader (:mod:`tests.backends.test_live_truth`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backends.test_live_truth import Case, Reading, _load, _rows_of, _serve_and_read

CORPUS = sorted((Path(__file__).parents[2] / "fixtures" / "gangs_2026").glob("*.yaml"))
CASES = _load(CORPUS)


@pytest.fixture(scope="module")
def reading(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reading]:
    yield _serve_and_read(tmp_path_factory.mktemp("gangs-2026"), CASES)


def _row(reading: Reading, case: str, job: str) -> dict[str, Any]:
    return _rows_of(reading, case)[job]


def test_every_case_names_its_upstream() -> None:
    assert len(CASES) >= 8
    for case in CASES:
        assert {"repo", "path", "commit"} <= set(case.upstream), case.id
        assert len(case.upstream["commit"]) == 40, case.id


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(reading: Reading, case: Case) -> None:
    rows = _rows_of(reading, case.id)
    wanted = {e["job"]: e for e in case.expect}
    assert set(rows) == set(wanted), f"{case.id}: rows {sorted(rows)} ({case.why})"
    for name, expect in wanted.items():
        row = rows[name]
        for key, value in expect.items():
            if key == "job":
                continue
            if key == "eta":
                assert (row["eta"] is not None) == bool(value), f"{case.id} {name}: eta {row['eta']!r}"
                continue
            assert row.get(key) == value, f"{case.id} {name}: {key} = {row.get(key)!r}, expected {value!r}"


def test_nothing_was_skipped_and_the_new_kinds_were_watched(reading: Reading) -> None:
    snap = reading.view.snapshot
    assert dict(snap.skipped) == {}
    kinds = {key[:2] for key in snap.objects}
    assert ("scheduling.k8s.io", "PodGroup") in kinds  # the native gang API, feature-detected
    assert ("kueue.x-k8s.io", "Topology") in kinds
    assert ("topology.volcano.sh", "HyperNode") in kinds


def test_tas_admitted_placement_is_drawn_over_the_topology(reading: Reading) -> None:
    topo = _row(reading, "g26-tas-admitted", "Job/tas-sample-required")["topology"]
    kueue = topo["kueue"]
    assert kueue["requests"] == [
        {"pod_set": "main", "mode": "required", "level": "cloud.provider.com/topology-rack"}
    ]
    (placed,) = kueue["placements"]
    # the compressed slice (prefix + roots, universal pod count) unfolds into 2 domains of 2 pods
    assert placed["domains"] == [
        {
            "values": {"kubernetes.io/hostname": "block-1-rack-1-node-1"},
            "pods": 2,
            "path": ["block-1", "rack-1", "block-1-rack-1-node-1"],  # over the Topology's 3 levels
        },
        {
            "values": {"kubernetes.io/hostname": "block-1-rack-1-node-2"},
            "pods": 2,
            "path": ["block-1", "rack-1", "block-1-rack-1-node-2"],
        },
    ]
    # Kueue names only hostnames; the Topology's higher levels come from those nodes' labels
    assert placed["topology"] == "default"
    assert placed["spans"] == {
        "cloud.provider.com/topology-block": ["block-1"],
        "cloud.provider.com/topology-rack": ["rack-1"],
        "kubernetes.io/hostname": ["block-1-rack-1-node-1", "block-1-rack-1-node-2"],
    }
    assert topo["nvlink_cliques"] == ["7f4a.1"]  # GFD's clique label of both nodes
    assert "why_no_domain" not in topo


def test_tas_failed_says_why_no_domain_fits(reading: Reading) -> None:
    row = _row(reading, "g26-tas-failed", "Job/tas-too-wide")
    assert row["reason_message"].startswith("TopologyPlacementFailed: couldn't assign flavors")
    why = row["topology"]["why_no_domain"]
    assert why["source"] == "kueue:Workload.QuotaReserved"
    assert "doesn't allow to fit any of 8 pod(s)" in why["message"]
    assert row["topology"]["kueue"]["requests"][0]["level"] == "cloud.provider.com/topology-rack"
    assert "placements" not in row["topology"]["kueue"]


def test_multikueue_names_the_worker_cluster(reading: Reading) -> None:
    row = _row(reading, "g26-multikueue", "Job/remote-train")
    assert row["multikueue"] == {"cluster": "worker1", "nominated": []}


def test_local_queue_admission_fair_sharing_usage(reading: Reading) -> None:
    from hpctop.model.objects import LocalQueue

    lq = reading.view.snapshot.objects[("kueue.x-k8s.io", "LocalQueue", "g26-tas-admitted", "tas-user-queue")]
    assert isinstance(lq, LocalQueue)
    assert lq.consumed is not None and lq.consumed.gpu == 8000
    row = _row(reading, "g26-tas-admitted", "Job/tas-sample-required")
    assert row["admission_fair_sharing"] == {
        "local_queue": "g26-tas-admitted/tas-user-queue",
        "consumed_gpus": 8.0,
        "consumed_cpus": 0.0,
        "consumed_memory": 0,
    }
    assert "admission_fair_sharing" not in _row(reading, "g26-tas-failed", "Job/tas-too-wide")


def test_native_gang_is_one_row_with_the_schedulers_reason(reading: Reading) -> None:
    snap = reading.view.snapshot
    job = snap.jobs[("g26-native-gang", "PodGroup.scheduling.k8s.io", "trainer-pg")]
    assert job.gang is not None and job.gang.min_member == 3
    assert job.backends == ("workload-api",)
    assert job.observed_reason is not None
    assert job.observed_reason.source == "k8s:PodGroup.PodGroupInitiallyScheduled"
    assert "4 Insufficient nvidia.com/gpu" in job.observed_reason.message
    row = _row(reading, "g26-native-gang", "PodGroup.scheduling.k8s.io/trainer-pg")
    assert row["topology"]["podgroup"]["keys"] == ["nvidia.com/gpu.clique"]
    short = snap.jobs[("g26-native-gang-short", "PodGroup.scheduling.k8s.io", "short-pg")]
    assert [r.message for r in short.reasons if r.code.value == "GangIncomplete"] == [
        "2 of minCount 4 pods exist"
    ]


def test_volcano_hypernode_job_spans_one_leaf(reading: Reading) -> None:
    topo = _row(reading, "g26-volcano-hypernode", "Job.batch.volcano.sh/nt-job")["topology"]["volcano"]
    assert topo["network_topology"] == {"mode": "hard", "highest_tier_allowed": "1"}
    assert topo["spans"] == {"tier1": ["s0"], "tier2": ["s4"]}


def test_volcano_gang_message_is_parsed_into_counts(reading: Reading) -> None:
    row = _row(reading, "g26-volcano-gang-message", "PodGroup.scheduling.volcano.sh/big-gang")
    assert row["gang_status"] == {
        "pending": 3,
        "total": 4,
        "ready": False,
        "states": {"Running": 1, "Pending": 3},
        "min_available": 4,
        "pending_reasons": {"Schedulable": 1, "Unschedulable": 2},
    }


def test_the_job_detail_draws_the_placement_tree(reading: Reading) -> None:
    from hpctop.tui.screens.detail import detail_text

    snap = reading.view.snapshot
    job = snap.jobs[("g26-tas-admitted", "Job", "tas-sample-required")]
    now = reading.view.result.now
    text = detail_text(job, reading.view.result.plans.get(job.key), snap, now, [], {}).plain
    section = text.split("\nTopology\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[0] == "  Kueue TAS: pod set main required topology-rack"
    assert section[1] == "  placed over topology default: 2 domain(s)"
    # block and rack are printed once; the second host shares them
    assert section[3].split() == ["block-1", "rack-1", "block-1-rack-1-node-1", "██", "2", "pods"]
    assert section[4].split() == ["block-1-rack-1-node-2", "██", "2", "pods"]
    assert section[5] == "    spans 1 topology-block, 1 topology-rack, 2 hostname"
    assert section[6] == "  NVLink cliques (GFD): 7f4a.1"
    failed = snap.jobs[("g26-tas-failed", "Job", "tas-too-wide")]
    text = detail_text(failed, None, snap, reading.view.result.now, [], {}).plain
    assert "no domain fits (kueue:Workload.QuotaReserved): TopologyPlacementFailed: couldn't assign" in text


def test_every_queueing_backend_gets_a_position_labelled_as_an_estimate(reading: Reading) -> None:
    rows = [
        r
        for r in reading.rows
        if r["state"] == "PENDING" and r["queue_layer"] is not None and "multikueue" not in r
    ]
    assert {r["queue_layer"] for r in rows} >= {"kueue", "volcano", "workload-api"}
    for row in rows:
        pos = row["queue_position"]
        assert pos["source"] == "estimate" and pos["rule"], row["id"]
        assert 1 <= pos["position"] <= pos["of"], row["id"]
    # Kueue ranks per ClusterQueue, only what has no quota yet: the MultiKueue workload dispatched
    # to worker1 is out of the line, the TAS-failed one is alone in it
    failed = _row(reading, "g26-tas-failed", "Job/tas-too-wide")["queue_position"]
    assert (failed["position"], failed["of"], failed["queue"]) == (1, 1, "root.tas-cluster-queue")
    remote = _row(reading, "g26-multikueue", "Job/remote-train")
    assert "queue_position" not in remote
    assert remote["reason"] == "WaitingForScheduling" and "worker cluster worker1" in remote["reason_message"]
    # the native API has no queues: one cluster-wide line
    native = [r for r in rows if r["queue_layer"] == "workload-api"]
    assert {r["queue_position"]["queue"] for r in native} == {None}
    assert sorted(r["queue_position"]["position"] for r in native) == list(range(1, len(native) + 1))
    assert {r["queue_position"]["of"] for r in native} == {len(native)}


def test_nodes_gpus_and_queues_count_the_gangs(reading: Reading) -> None:
    from hpctop.tables.nodes import gpu_rows, node_rows
    from hpctop.tables.queues import queue_rows

    view = reading.view
    nodes = {r["node"]: r for r in node_rows(view.snapshot, view.result)}
    # the TAS gang's 4 pods x 2 GPUs, 2 per node: both GB200 nodes full; the vcjob's 4 + 4 on node-0/1
    assert [nodes[f"block-1-rack-1-node-{i}"]["gpus_alloc"] for i in (1, 2)] == [4, 4]
    assert [nodes[n]["gpus_alloc"] for n in ("node-0", "node-1")] == [4, 4]
    groups = {r["model"]: r for r in gpu_rows(view.snapshot, view.result)}
    assert (groups["NVIDIA-GB200"]["total"], groups["NVIDIA-GB200"]["allocated"]) == (8, 8)
    assert (groups["NVIDIA-H100-80GB-HBM3"]["total"], groups["NVIDIA-H100-80GB-HBM3"]["allocated"]) == (16, 8)
    queues = {r["path"]: r for r in queue_rows(view.result)}
    assert queues["root.tas-cluster-queue"]["guaranteed_gpus"] == 16
    assert queues["root.tas-cluster-queue"]["used_gpus"] == 8  # the admitted TAS gang
    assert "root.g26-default" in queues  # the Volcano queue of the HyperNode job and the big gang
