"""The join of Slurm's jobs into a Kubernetes snapshot (hpctop.runtime.slurm_join), case by case.

On the recorded demo (tests/runtime/test_slinky_demo.py says what it holds), with one thing
changed each time: what the join must do then follows from the rules in the module doc.
"""

from __future__ import annotations

import dataclasses

from hpctop.backends.slurm.wire import SlurmJob, per_node_gpus
from hpctop.model.store import Snapshot
from hpctop.runtime.slinky_demo import slinky_demo_session
from hpctop.runtime.slurm_join import RowMemo, gres_detail_gpus, join, slurm_partition_rows
from hpctop.sources.slurm.poll import SlurmView
from hpctop.tables.jobs import slurm_job_row


def _demo() -> tuple[Snapshot, SlurmView]:
    session = slinky_demo_session()
    return session.inner.snapshot, session.poller.view


def _job(view: SlurmView, job_id: int) -> SlurmJob:
    return next(j for j in view.jobs if j.job_id == job_id)


def test_the_inner_snapshot_is_not_changed() -> None:
    snapshot, view = _demo()
    before = {key: pod.requests.gpu for key, pod in snapshot.pods.items()}
    joined = join(snapshot, view, version=7)
    assert {key: pod.requests.gpu for key, pod in snapshot.pods.items()} == before
    assert joined.version == 7
    slurmd = joined.pods[("slurm", "slurm-worker-gpu-1")]
    assert slurmd.requests.gpu == 0  # sn1's two GPUs are Slurm job 1's (gpu:2(IDX:0-1))
    assert joined.pods[("slurm", "slurm-worker-gpu-2")].requests.gpu == 1000  # job 2 took one


def test_a_job_on_a_node_without_a_slurmd_pod_keeps_its_row_and_places_nothing() -> None:
    snapshot, view = _demo()
    moved = dataclasses.replace(_job(view, 1), nodes="elsewhere1")
    jobs = tuple(moved if j.job_id == 1 else j for j in view.jobs)
    joined = join(snapshot, dataclasses.replace(view, jobs=jobs), version=1)
    row = joined.jobs[("", "SlurmJob", "1")]
    assert row.pods == () and row.nodes == ("elsewhere1",)
    assert row.per_member.gpu == 2000  # what it asked per node is still said
    assert joined.pods[("slurm", "slurm-worker-gpu-1")].requests.gpu == 2000  # sn1's slurmd keeps them


def test_a_bridge_pod_of_a_job_slurm_does_not_list_stays_a_kubernetes_row() -> None:
    snapshot, view = _demo()
    jobs = tuple(j for j in view.jobs if j.job_id != 3)  # the bridge pod's Slurm job is gone
    joined = join(snapshot, dataclasses.replace(view, jobs=jobs), version=1)
    assert ("slurm-bridge", "Job", "bridge-train") in joined.jobs
    assert ("", "SlurmJob", "3") not in joined.jobs
    with_it = join(snapshot, view, version=2)
    assert ("slurm-bridge", "Job", "bridge-train") not in with_it.jobs


def test_a_stale_view_adds_its_note_and_keeps_the_rows() -> None:
    snapshot, view = _demo()
    stale = dataclasses.replace(view, stale=True, note="Slurm rows stale (12:00:00): slurmrestd failed")
    joined = join(snapshot, stale, version=1)
    assert joined.notes[-1] == stale.note and ("", "SlurmJob", "1") in joined.jobs


def test_gres_strings_as_slurm_writes_them() -> None:
    assert gres_detail_gpus("gpu:2(IDX:0-1)") == (2, (0, 1))
    assert gres_detail_gpus("gpu:a100:2(IDX:0,2)") == (2, (0, 2))
    assert gres_detail_gpus("gpu:1(IDX:3),shard:0") == (1, (3,))
    assert gres_detail_gpus("(null)") == (0, ())
    assert per_node_gpus("gres:gpu:2") == 2  # 22.05
    assert per_node_gpus("gres/gpu:a100:4") == 4  # 23.02 and later
    assert per_node_gpus("gres/gpu") == 1
    assert per_node_gpus("gres/shard:2") == 0


def test_a_job_row_counts_the_gpus_asked_per_node_when_the_tres_names_none() -> None:
    """Debian's 22.05 slurmrestd sends ``tres_req_str`` without ``gres/gpu`` and the GPUs only in
    ``tres_per_node`` (``gres:gpu:2``): the row has per-node GPUs times nodes, not 0."""
    _, view = _demo()
    job = dataclasses.replace(
        _job(view, view.jobs[0].job_id),
        tres="cpu=2,mem=4000M,node=2",
        tres_per_node="gres:gpu:2",
        node_count=2,
    )
    assert job.gpus == 4 and slurm_job_row(job, 0.0)["gpus"] == 4
    with_total = dataclasses.replace(job, tres="cpu=2,mem=4000M,node=2,gres/gpu=3")
    assert slurm_job_row(with_total, 0.0)["gpus"] == 3  # the job's own TRES wins


def test_partitions_rows_follow_slurms_state() -> None:
    _, view = _demo()
    down = tuple(dataclasses.replace(p, state="DOWN") if p.name == "debug" else p for p in view.partitions)
    rows = slurm_partition_rows(dataclasses.replace(view, partitions=down))
    assert rows["slurm.debug"].state.value == "closed" and rows["slurm.gpu"].state.value == "open"
    assert (rows["slurm"].running_jobs, rows["slurm"].pending_jobs) == (3, 3)
    assert slurm_partition_rows(SlurmView()) == {}


def test_an_unchanged_slurm_job_keeps_its_row_object_across_joins() -> None:
    """The console's row cache keys on a job's identity: an unchanged Slurm job must be the same
    ``Job`` next time, a changed one a new one (its row is rebuilt)."""
    snapshot, view = _demo()
    memo: RowMemo = {}
    first = join(snapshot, view, version=1, memo=memo)
    again = join(snapshot, view, version=2, memo=memo)
    for key in (("", "SlurmJob", "1"), ("", "SlurmJob", "4")):
        assert again.jobs[key] is first.jobs[key]
    bumped = tuple(dataclasses.replace(j, priority=99) if j.job_id == 4 else j for j in view.jobs)
    third = join(snapshot, dataclasses.replace(view, jobs=bumped), version=3, memo=memo)
    assert third.jobs[("", "SlurmJob", "4")] is not first.jobs[("", "SlurmJob", "4")]
    assert third.jobs[("", "SlurmJob", "4")].priority_value == 99
    assert third.jobs[("", "SlurmJob", "1")] is first.jobs[("", "SlurmJob", "1")]
