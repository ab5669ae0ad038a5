"""A first-fit stand-in for the scheduling core, so simulator and session tests do not depend on it.

It is deliberately simple (FIFO by submit time, all members or none, first node that fits, first
GPUs that fit) and fast; the tests here check that it does what the other tests assume.
"""

from __future__ import annotations

from hpctop.model.objects import Job, Node
from hpctop.model.policy import Policy
from hpctop.model.resources import Resources
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import Placement, PodAssignment, ScheduleResult


def _free(snapshot: Snapshot) -> tuple[dict[str, Resources], dict[str, list[int]]]:
    free: dict[str, Resources] = {}
    gpus: dict[str, list[int]] = {}
    for name, node in snapshot.nodes.items():
        free[name] = node.allocatable
        gpus[name] = [0] * node.gpu.count
    for pod in snapshot.pods.values():
        if pod.holds_resources and pod.node_name in free:
            free[pod.node_name] = free[pod.node_name] - pod.requests
            if pod.gpu_indices:
                share = pod.requests.gpu // len(pod.gpu_indices)
                for i in pod.gpu_indices:
                    gpus[pod.node_name][i] += share
    return free, gpus


def _pick(node: Node, used: list[int], request: Resources, models: tuple[str, ...]) -> tuple[int, ...] | None:
    if models and node.gpu.product not in models:
        return None
    if request.gpu == 0:
        return ()
    if request.gpu < 1000:
        for i, u in enumerate(used):
            if u + request.gpu <= 1000:
                return (i,)
        return None
    whole = [i for i, u in enumerate(used) if u == 0]
    n = request.gpu // 1000
    return tuple(whole[:n]) if len(whole) >= n else None


def first_fit(snapshot: Snapshot, policy: Policy, now: float) -> ScheduleResult:
    free, gpus = _free(snapshot)
    nodes = [(name, node) for name, node in snapshot.nodes.items() if node.schedulable]
    pending = sorted(
        (j for j in snapshot.jobs.values() if j.state == JobState.PENDING and j.pending_pods),
        key=lambda j: (j.submit_time, j.key),
    )
    placements: list[Placement] = []
    for job in pending:
        trial_free: dict[str, Resources] = {}  # overlays on free/gpus for this job's members
        trial_gpus: dict[str, list[int]] = {}
        out: list[PodAssignment] = []
        for pod_key in job.pending_pods:
            pod = snapshot.pods[pod_key]
            for name, node in nodes:
                have = trial_free.get(name, free[name])
                if not pod.requests.fits_in(have):
                    continue
                used = trial_gpus.get(name, gpus[name])
                chosen = _pick(node, used, pod.requests, job.gpu_models)
                if chosen is None:
                    continue
                trial_free[name] = have - pod.requests
                used = list(used)
                share = pod.requests.gpu // max(len(chosen), 1)
                for i in chosen:
                    used[i] += share
                trial_gpus[name] = used
                out.append(PodAssignment(pod_key, name, chosen))
                break
            else:
                break
        if len(out) == len(job.pending_pods):
            free.update(trial_free)
            gpus.update(trial_gpus)
            placements.append(Placement(job.key, tuple(out)))
    return ScheduleResult(
        now=now,
        cluster=Resources(),
        partitions=(),
        queues={},
        plans={},
        placements=tuple(placements),
        pending_order=tuple(j.key for j in pending),
    )


def pending_jobs(jobs: list[Job]) -> list[Job]:
    return [j for j in jobs if j.state == JobState.PENDING]


def test_first_fit_places_whole_gangs_or_nothing() -> None:
    from tests.sources.test_simulator import small_session

    session = small_session(
        """
[[nodes]]
name = "n"
count = 1
gpus = 8
gpu_model = "H100"
cpu = "64"
memory = "512Gi"

[[jobs]]
name = "big"
duration = 100
members = 2
per_member = { gpu = 8, cpu = "1", memory = "1Gi" }

[[jobs]]
name = "small"
duration = 100
per_member = { gpu = 8, cpu = "1", memory = "1Gi" }
"""
    )
    jobs = {j.name: j for j in session.snapshot.jobs.values()}
    assert jobs["big"].state == JobState.PENDING
    assert jobs["big"].running_members == 0
    assert jobs["small"].state == JobState.RUNNING
