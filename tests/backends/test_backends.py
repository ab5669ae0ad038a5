"""Every scheduler's state in one model: the "done when" cases of the live read path (items 3-5).

Fixtures are built from the formats in SCHEDULERS.md (§4 YuniKorn, §5 Kueue, §6 Volcano, §7.1
coscheduling, §2.3 Kubeflow/JobSet/Deployment) and fed through ``Store.apply_raw`` as the
reflector would, so decoding, joining and deriving are tested together.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hpctop.backends.kube_scheduler.read import parse_unschedulable, pod_reason
from hpctop.model.backends.queues import policy_from_snapshot
from hpctop.model.decode import DecodeError, decode_list, decode_object
from hpctop.model.objects import ClusterQueue, JobKind, PodGroup, ReasonFragment
from hpctop.model.policy import Policy, QueueSpec, QueueState
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Store
from tests.model_fixtures import event, pod

FIXTURES = Path(__file__).parents[1] / "fixtures" / "backends"

KWL = "Workload.kueue.x-k8s.io"
CQ = "ClusterQueue.kueue.x-k8s.io"
LQ = "LocalQueue.kueue.x-k8s.io"
COHORT = "Cohort.kueue.x-k8s.io"
RF = "ResourceFlavor.kueue.x-k8s.io"
VQ = "Queue.scheduling.volcano.sh"
VPG = "PodGroup.scheduling.volcano.sh"
CPG = "PodGroup.scheduling.x-k8s.io"
VCJOB = "Job.batch.volcano.sh"


def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def _store() -> Store:
    return Store(clock=lambda: 1767225600.0)


def _add(store: Store, kind: str, obj: dict[str, Any], etype: str = "ADDED") -> None:
    assert store.apply_raw(kind, event(etype, obj)), store.skipped


def _owned(p: dict[str, Any], api_version: str, kind: str, name: str, uid: str) -> dict[str, Any]:
    p["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}
    ]
    return p


# -- YuniKorn ----------------------------------------------------------------------------------------

TASK_GROUPS = (
    '[{"name":"workers","minMember":4,"minResource":{"cpu":"32","memory":"256Gi","nvidia.com/gpu":"8"},'
    '"nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"}}]'
)


def _yk_pod(name: str, *, placeholder: bool = False, node: str | None = None) -> dict[str, Any]:
    annotations = {
        "yunikorn.apache.org/task-group-name": "workers",
        "yunikorn.apache.org/schedulingPolicyParameters": (
            "placeholderTimeoutInSeconds=600 gangSchedulingStyle=Hard"
        ),
        "yunikorn.apache.org/task-groups": TASK_GROUPS,
    }
    if placeholder:
        annotations["internal.yunikorn.apache.org/placeholder"] = "true"
    p = pod(
        name,
        node=node,
        phase="Running" if node else "Pending",
        gpus=8,
        labels={
            "yunikorn.apache.org/app-id": "llm-sft-0193",
            "yunikorn.apache.org/queue": "root.research.nlp",
        },
        annotations=annotations,
    )
    p["spec"]["schedulerName"] = "yunikorn"
    return p


def test_yunikorn_gang_counts_placeholders_under_the_gang_not_as_members() -> None:
    s = _store()
    for i in range(4):
        _add(s, "Pod", _yk_pod(f"llm-sft-worker-{i}"))
    for i in range(4):
        _add(
            s, "Pod", _yk_pod(f"tg-llm-sft-0193-workers-{i}", placeholder=True, node="n1" if i < 2 else None)
        )
    job = s.snapshot().jobs[("team-a", "Application", "llm-sft-0193")]
    assert job.members == 4
    assert len(job.pods) == 4 and all("tg-" not in name for _, name in job.pods)
    assert job.gang is not None
    assert job.gang.min_member == 4 and job.gang.placeholders == 4 and job.gang.style == "hard"
    assert job.min_members == 4
    assert job.queue == "root.research.nlp"
    assert job.state == JobState.PENDING
    assert job.observed_reason is not None
    assert job.observed_reason.code == ReasonCode.GANG_INCOMPLETE
    assert job.observed_reason.source == "yk:placeholders"
    assert job.observed_reason.message == "2 of 4 placeholders allocated"
    # the pods' own Unschedulable evidence is kept behind it, parsed
    assert [r.code for r in job.reasons] == [ReasonCode.GANG_INCOMPLETE, ReasonCode.RESOURCES]
    assert job.reasons[1].fragments == (
        ReasonFragment(3, ReasonCode.RESOURCES, "Insufficient nvidia.com/gpu"),
    )


def test_yunikorn_scheduling_skipped_is_quota() -> None:
    s = _store()
    p = _yk_pod("solo")
    p["metadata"]["annotations"] = {}
    p["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulingSkipped",
            "message": "queue quota exceeded",
        }
    ]
    _add(s, "Pod", p)
    job = s.snapshot().jobs[("team-a", "Application", "llm-sft-0193")]
    assert job.observed_reason is not None
    assert job.observed_reason.code == ReasonCode.QUOTA_EXCEEDED
    assert job.observed_reason.message == "queue quota exceeded"


def test_yunikorn_rest_queue_tree_lands_in_the_neutral_queues() -> None:
    s = _store()
    assert s.apply_yunikorn_queues((FIXTURES / "yunikorn_queues.json").read_bytes())
    queues = s.snapshot().queues
    assert list(queues) == ["root", "root.old", "root.research", "root.research.nlp"]
    nlp = queues["root.research.nlp"]
    assert (nlp.backend, nlp.kind, nlp.parent, nlp.state) == ("yunikorn", "leaf", "root.research", "Open")
    assert nlp.guaranteed.gpu == 16_000 and nlp.guaranteed.cpu == 64_000
    assert nlp.max is not None and nlp.max.gpu == 32_000
    assert nlp.allocated.gpu == 24_000 and nlp.borrowed.gpu == 8_000 and nlp.borrowing
    assert nlp.pending.gpu == 32_000 and nlp.running_jobs == 3
    assert queues["root"].kind == "parent"
    assert queues["root"].max is not None and queues["root"].max.memory == 1 << 40
    assert queues["root.old"].state == "Draining"
    policy = policy_from_snapshot(s.snapshot(), Policy())
    specs = {q.path: q for q in policy.queues}
    assert specs["root.old"].state == QueueState.CLOSED
    assert specs["root.research.nlp"] == QueueSpec(
        "root.research.nlp", nlp.guaranteed, nlp.max, QueueState.OPEN
    )
    # a malformed document is counted and the last good tree is kept
    assert not s.apply_yunikorn_queues(b'{"children": 3}')
    assert any(k.startswith("YuniKorn queues") for k in s.snapshot().skipped)
    assert "root.research.nlp" in s.snapshot().queues


# -- Kueue ---------------------------------------------------------------------------------------


def _kueue_store(fixture: dict[str, Any], *, workload_first: bool = False) -> Store:
    s = _store()
    _add(s, COHORT, fixture["cohort"])
    for cq in fixture["clusterqueues"]:
        _add(s, CQ, cq)
    _add(s, LQ, fixture["localqueue"])
    _add(s, RF, fixture["flavor"])
    if workload_first:
        _add(s, KWL, fixture["workload"])
        _add(s, "Job", fixture["job"])
    else:
        _add(s, "Job", fixture["job"])
        _add(s, KWL, fixture["workload"])
    return s


@pytest.mark.parametrize("workload_first", [False, True])
def test_kueue_workload_pending_on_quota_while_its_cohort_borrows(workload_first: bool) -> None:
    fixture = _load("kueue_quota_borrowing.json")
    if workload_first:  # joined by the job-uid label, whichever arrives first
        del fixture["workload"]["metadata"]["ownerReferences"]
    s = _kueue_store(fixture, workload_first=workload_first)
    snap = s.snapshot()
    job = snap.jobs[("team-a", "Job", "train")]
    # a Kueue job waits suspended: that is PENDING on quota, not HELD
    assert job.state == JobState.PENDING
    assert job.observed_reason is not None
    assert job.observed_reason.code == ReasonCode.QUOTA_EXCEEDED
    assert job.observed_reason.source == "kueue:Workload.QuotaReserved"
    assert "insufficient unused quota for nvidia.com/gpu in flavor h100-sxm" in job.observed_reason.message
    assert job.queue == "root.research.research-h100"
    assert job.min_members == 4 and job.members == 4
    assert job.backends == ("kueue",)
    assert job.backend_objects == (("kueue.x-k8s.io", "Workload", "team-a", "job-train-7f173"),)

    cq = snap.queues["root.research.research-h100"]
    assert (cq.kind, cq.backend, cq.parent, cq.state) == ("cluster", "kueue", "root.research", "Open")
    assert cq.guaranteed.gpu == 64_000 and cq.guaranteed.cpu == 256_000
    assert cq.max is not None and cq.max.gpu == 96_000 and cq.max.cpu == 0  # cpu: may borrow, no limit
    assert cq.borrowing_limit is not None and cq.borrowing_limit.gpu == 32_000
    assert cq.lending_limit is not None and cq.lending_limit.gpu == 16_000
    assert cq.allocated.gpu == 80_000 and cq.borrowed.gpu == 16_000 and cq.borrowing
    assert cq.pending_jobs == 1 and cq.admitted_jobs == 3
    cohort = snap.queues["root.research"]
    assert (cohort.kind, cohort.parent) == ("cohort", "root")
    assert cohort.guaranteed.gpu == 96_000 and cohort.max is not None and cohort.max.gpu == 96_000
    assert cohort.allocated.gpu == 88_000 and cohort.borrowed.gpu == 16_000 and cohort.borrowing
    assert not snap.queues["root.research.research-a100"].borrowing
    local = snap.queues["root.research.research-h100.team-a/team-a-gpu"]
    assert (local.kind, local.parent) == ("local", "root.research.research-h100")

    policy = policy_from_snapshot(snap, Policy(queues=(QueueSpec("root.default"),)))
    paths = [q.path for q in policy.queues]
    assert paths == [
        "root.default",
        "root.research",
        "root.research.research-a100",
        "root.research.research-h100",
    ]


def test_kueue_v1beta1_shapes_read_the_same() -> None:
    fixture = _load("kueue_quota_borrowing.json")
    for cq in fixture["clusterqueues"]:
        cq["apiVersion"] = "kueue.x-k8s.io/v1beta1"
        cq["spec"]["cohort"] = cq["spec"].pop("cohortName")
    wl = fixture["workload"]
    wl["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    del wl["spec"]["priorityClassRef"]
    wl["spec"]["priorityClassName"] = "research-high"
    wl["spec"]["priorityClassSource"] = "kueue.x-k8s.io/workloadpriorityclass"
    s = _kueue_store(fixture)
    snap = s.snapshot()
    assert snap.jobs[("team-a", "Job", "train")].queue == "root.research.research-h100"
    assert snap.queues["root.research.research-h100"].borrowed.gpu == 16_000
    obj = snap.objects[("kueue.x-k8s.io", "Workload", "team-a", "job-train-7f173")]
    assert getattr(obj, "priority_class", None) == "research-high"


def test_kueue_evidence_drives_held_queue_held_and_finished() -> None:
    fixture = _load("kueue_quota_borrowing.json")
    s = _kueue_store(fixture)
    key = ("team-a", "Job", "train")

    held = copy.deepcopy(fixture["workload"])
    held["spec"]["active"] = False
    _add(s, KWL, held, "MODIFIED")
    job = s.snapshot().jobs[key]
    assert job.state == JobState.HELD
    assert job.observed_reason is not None and job.observed_reason.code == ReasonCode.HELD
    assert job.observed_reason.source == "kueue:Workload.spec.active"

    # the ClusterQueue is put on hold: QueueHeld comes before QuotaExceeded (§1.5)
    _add(s, KWL, fixture["workload"], "MODIFIED")
    stopped = copy.deepcopy(fixture["clusterqueues"][0])
    stopped["spec"]["stopPolicy"] = "Hold"
    _add(s, CQ, stopped, "MODIFIED")
    job = s.snapshot().jobs[key]
    assert [r.code for r in job.reasons] == [ReasonCode.QUEUE_HELD, ReasonCode.QUOTA_EXCEEDED]
    assert job.observed_reason is not None and job.observed_reason.source == "kueue:ClusterQueue.stopPolicy"
    assert s.snapshot().queues["root.research.research-h100"].state == "Held"
    assert policy_from_snapshot(s.snapshot(), Policy()).queues[-1].state == QueueState.CLOSED

    failed = copy.deepcopy(fixture["workload"])
    failed["status"]["conditions"] = [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
        {"type": "Finished", "status": "True", "reason": "Failed", "message": "Job failed"},
    ]
    _add(s, KWL, failed, "MODIFIED")
    assert s.snapshot().jobs[key].state == JobState.FAILED

    untried = copy.deepcopy(fixture["workload"])
    untried["status"] = {}
    _add(s, KWL, untried, "MODIFIED")
    job = s.snapshot().jobs[key]
    assert job.state == JobState.PENDING
    assert ReasonCode.PRIORITY in [r.code for r in job.reasons]

    backoff = copy.deepcopy(fixture["workload"])
    backoff["status"]["requeueState"] = {"count": 2, "requeueAt": "2026-01-01T00:10:00Z"}
    _add(s, KWL, backoff, "MODIFIED")
    job = s.snapshot().jobs[key]
    assert job.state == JobState.REQUEUED and job.restart_count == 2
    assert ReasonCode.BACKOFF in [r.code for r in job.reasons]

    # the Workload goes away: the job is plain again (suspended, so held)
    _add(s, KWL, fixture["workload"], "DELETED")
    job = s.snapshot().jobs[key]
    assert job.state == JobState.HELD and job.backends == ()


# -- Volcano -------------------------------------------------------------------------------------


def _volcano_store(fixture: dict[str, Any]) -> Store:
    s = _store()
    for q in fixture["queues"]:
        _add(s, VQ, q)
    _add(s, VCJOB, fixture["vcjob"])
    _add(s, VPG, fixture["podgroup"])
    for i in range(4):
        p = pod(f"llm-pt-worker-{i}", gpus=8, annotations={"scheduling.k8s.io/group-name": "llm-pt-5e1a"})
        p["spec"]["schedulerName"] = "volcano"
        _add(s, "Pod", _owned(p, "batch.volcano.sh/v1alpha1", "Job", "llm-pt", "5e1a"))
    return s


def test_volcano_podgroup_inqueue() -> None:
    fixture = _load("volcano.json")
    s = _volcano_store(fixture)
    snap = s.snapshot()
    job = snap.jobs[("team-a", VCJOB, "llm-pt")]
    assert job.state == JobState.PENDING
    assert job.members == 4 and job.min_members == 4
    assert job.gang is not None and job.gang.name == "llm-pt-5e1a"
    assert job.queue == "root.eng.prod"
    assert job.backends == ("volcano",)
    assert job.observed_reason is not None
    assert job.observed_reason.code == ReasonCode.RESOURCES
    assert job.observed_reason.source == "vc:PodGroup.Unschedulable"
    assert job.observed_reason.message.startswith("pod group is not ready, 4 Pending, 4 minAvailable")

    prod = snap.queues["root.eng.prod"]
    assert (prod.backend, prod.kind, prod.parent) == ("volcano", "leaf", "root.eng")
    assert prod.guaranteed.gpu == 16_000  # deserved wins over guarantee
    assert prod.max is not None and prod.max.gpu == 32_000
    assert prod.allocated.gpu == 24_000 and prod.borrowed.gpu == 8_000
    assert prod.pending_jobs == 2 and prod.running_jobs == 3
    assert snap.queues["root.eng"].kind == "parent"
    assert snap.queues["root.archive"].state == "Closed"

    # Inqueue without an Unschedulable condition: the queue let it in, allocation is next
    plain = copy.deepcopy(fixture["podgroup"])
    plain["status"] = {"phase": "Inqueue"}
    _add(s, VPG, plain, "MODIFIED")
    job = s.snapshot().jobs[("team-a", VCJOB, "llm-pt")]
    assert job.state == JobState.PENDING
    # the pods' own Unschedulable message now comes first (Resources precedes WaitingForScheduling)
    assert [(r.code, r.source) for r in job.reasons] == [
        (ReasonCode.RESOURCES, "pod:PodScheduled"),
        (ReasonCode.WAITING_FOR_SCHEDULING, "vc:PodGroup.phase"),
    ]

    # a vcjob Aborted is held; a same-named batch/v1 Job is another job
    aborted = copy.deepcopy(fixture["vcjob"])
    aborted["status"]["state"]["phase"] = "Aborted"
    _add(s, VCJOB, aborted, "MODIFIED")
    _add(s, "Job", {**copy.deepcopy(fixture["vcjob"]), "apiVersion": "batch/v1", "kind": "Job"})
    snap = s.snapshot()
    assert snap.jobs[("team-a", VCJOB, "llm-pt")].state == JobState.HELD
    assert snap.jobs[("team-a", "Job", "llm-pt")].pods == ()


def test_volcano_job_in_a_closed_queue_is_queue_held() -> None:
    fixture = _load("volcano.json")
    fixture["podgroup"]["spec"]["queue"] = "archive"
    fixture["podgroup"]["status"] = {"phase": "Pending"}
    job = _volcano_store(fixture).snapshot().jobs[("team-a", VCJOB, "llm-pt")]
    assert job.queue == "root.archive"
    assert job.observed_reason is not None
    assert job.observed_reason.code == ReasonCode.QUEUE_HELD
    assert job.observed_reason.source == "vc:Queue.state"


# -- Kubeflow, JobSet, Deployment ------------------------------------------------------------------


def _pytorchjob(min_available: int | None = None, suspend: bool = False) -> dict[str, Any]:
    template = {
        "spec": {
            "containers": [
                {
                    "name": "pytorch",
                    "resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"cpu": "32"}},
                }
            ]
        }
    }
    run_policy: dict[str, Any] = {"suspend": suspend}
    if min_available is not None:
        run_policy["schedulingPolicy"] = {"minAvailable": min_available, "queue": "research"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {
            "name": "bert",
            "namespace": "team-a",
            "uid": "uid-bert",
            "resourceVersion": "5",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "runPolicy": run_policy,
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": template},
                "Worker": {"replicas": 3, "restartPolicy": "OnFailure", "template": template},
            },
        },
        "status": {"conditions": [{"type": "Created", "status": "True", "reason": "PyTorchJobCreated"}]},
    }


@pytest.mark.parametrize(("min_available", "gang_min"), [(None, 4), (2, 2)])
def test_pytorchjob_master_and_three_workers_is_one_job_of_four(
    min_available: int | None, gang_min: int
) -> None:
    s = _store()
    _add(s, "PyTorchJob", _pytorchjob(min_available))
    for role, index in [("master", 0), ("worker", 0), ("worker", 1), ("worker", 2)]:
        p = pod(
            f"bert-{role}-{index}",
            gpus=8,
            node="n1" if role == "master" else None,
            phase="Running" if role == "master" else "Pending",
            labels={"training.kubeflow.org/job-name": "bert", "training.kubeflow.org/replica-type": role},
        )
        _add(s, "Pod", _owned(p, "kubeflow.org/v1", "PyTorchJob", "bert", "uid-bert"))
    snap = s.snapshot()
    assert [k for k in snap.jobs if k[2] == "bert"] == [("team-a", "PyTorchJob", "bert")]
    job = snap.jobs[("team-a", "PyTorchJob", "bert")]
    assert job.members == 4 and len(job.pods) == 4
    assert job.min_members == gang_min
    assert job.per_member.gpu == 8_000
    assert job.kind == JobKind.BATCH
    workload = snap.workloads[("team-a", "PyTorchJob", "bert")]
    assert [(g.name, g.replicas) for g in workload.groups] == [("Master", 1), ("Worker", 3)]
    # 1 of 4 running is below either gang minimum: placed in part, not RUNNING
    assert job.state == JobState.STARTING
    assert job.queue == (None if min_available is None else "research")  # schedulingPolicy.queue


def test_owner_queue_resolves_once_its_volcano_queue_arrives() -> None:
    s = _store()
    _add(s, "PyTorchJob", _pytorchjob(min_available=4))
    assert s.snapshot().jobs[("team-a", "PyTorchJob", "bert")].queue == "research"
    queue = {"metadata": {"name": "research"}, "spec": {"parent": "root"}, "status": {"state": "Open"}}
    _add(s, VQ, queue)
    assert s.snapshot().jobs[("team-a", "PyTorchJob", "bert")].queue == "root.research"


def test_suspended_pytorchjob_without_pods_is_held_with_four_members() -> None:
    s = _store()
    _add(s, "PyTorchJob", _pytorchjob(suspend=True))
    job = s.snapshot().jobs[("team-a", "PyTorchJob", "bert")]
    assert job.state == JobState.HELD and job.members == 4 and job.requested.gpu == 32_000


def test_inference_deployment_holding_mig_slices_is_a_service() -> None:
    s = _store()
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "llm-infer", "namespace": "serving", "uid": "uid-d", "resourceVersion": "3"},
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "vllm",
                            "resources": {
                                "requests": {"cpu": "4", "memory": "16Gi"},
                                "limits": {"nvidia.com/mig-1g.10gb": "1"},
                            },
                        }
                    ]
                }
            },
        },
        "status": {"readyReplicas": 3, "availableReplicas": 3},
    }
    _add(s, "Deployment", deployment)
    for i in range(3):
        p = pod(f"llm-infer-7d9f8-{i}", namespace="serving", node="n1", phase="Running")
        p["metadata"]["labels"] = {"pod-template-hash": "7d9f8"}
        p["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/mig-1g.10gb": "1"}
        _add(s, "Pod", _owned(p, "apps/v1", "ReplicaSet", "llm-infer-7d9f8", "uid-rs"))
    job = s.snapshot().jobs[("serving", "Deployment", "llm-infer")]
    assert job.kind == JobKind.SERVICE
    assert job.members == 3 and job.running_members == 3 and job.state == JobState.RUNNING
    assert dict(job.per_member.extended) == {"nvidia.com/mig-1g.10gb": 1}
    assert job.per_member.gpu == 0
    assert dict(job.requested.extended) == {"nvidia.com/mig-1g.10gb": 3}


def test_jobset_pods_fold_into_the_jobset_and_its_kueue_workload() -> None:
    s = _store()
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "llm-pt", "namespace": "team-a", "uid": "uid-js", "resourceVersion": "1"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 2,
                    "template": {
                        "spec": {
                            "parallelism": 2,
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"name": "t", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
                                    ]
                                }
                            },
                        }
                    },
                }
            ]
        },
    }
    _add(s, "JobSet", jobset)
    child = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "llm-pt-workers-0",
            "namespace": "team-a",
            "uid": "uid-child",
            "ownerReferences": [
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "name": "llm-pt",
                    "controller": True,
                }
            ],
        },
        "spec": {"parallelism": 2},
    }
    _add(s, "Job", child)
    for i in range(4):
        p = pod(
            f"llm-pt-workers-{i // 2}-{i % 2}", gpus=8, labels={"jobset.sigs.k8s.io/jobset-name": "llm-pt"}
        )
        _add(s, "Pod", _owned(p, "batch/v1", "Job", f"llm-pt-workers-{i // 2}", "uid-child"))
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": "jobset-llm-pt-4b2e1",
            "namespace": "team-a",
            "labels": {"kueue.x-k8s.io/job-uid": "uid-js"},
            "ownerReferences": [
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "name": "llm-pt",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "queueName": "team-a-gpu",
            "priority": 5000,
            "active": True,
            "podSets": [{"name": "workers", "count": 4}],
        },
        "status": {
            "admission": {"clusterQueue": "research-h100"},
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
                {"type": "Admitted", "status": "True", "reason": "Admitted"},
            ],
        },
    }
    _add(s, KWL, workload)
    snap = s.snapshot()
    assert ("team-a", "Job", "llm-pt-workers-0") not in snap.jobs  # a part, not a row
    job = snap.jobs[("team-a", "JobSet", "llm-pt")]
    assert job.members == 4 and len(job.pods) == 4 and job.min_members == 4
    assert job.backends == ("kueue",)
    assert job.queue == "root.research-h100"  # admitted to a ClusterQueue hpctop has not seen yet


# -- robustness ------------------------------------------------------------------------------------


def test_malformed_crds_are_skipped_and_counted() -> None:
    s = _store()
    bad_pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "x", "namespace": "a"},
        "spec": {"minMember": "many"},
    }
    assert not s.apply_raw(VPG, event("ADDED", bad_pg))
    assert not s.apply_raw(CQ, event("ADDED", {"metadata": {}, "spec": {}}))
    bad_wl = {"metadata": {"name": "w", "namespace": "a"}, "spec": {"podSets": [{"name": "m", "count": -1}]}}
    assert not s.apply_raw(KWL, event("ADDED", bad_wl))
    bad_quota = {
        "metadata": {"name": "cq"},
        "spec": {
            "resourceGroups": [
                {
                    "flavors": [
                        {"name": "f", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "lots"}]}
                    ]
                }
            ]
        },
    }
    assert not s.apply_raw(CQ, event("ADDED", bad_quota))
    assert not s.apply_raw(VQ, b"{not json")
    snap = s.snapshot()
    assert snap.objects == {} and snap.queues == {}
    assert sum(snap.skipped.values()) == 5
    assert any(k.startswith(VPG) for k in snap.skipped)
    # in a list page only the bad item is dropped
    good = {"metadata": {"name": "ok"}, "spec": {}}
    page = json.dumps({"metadata": {"resourceVersion": "9"}, "items": [good, {"metadata": {}}]}).encode()
    decoded = decode_list(CQ, page)
    assert [o.name for o in decoded.objects] == ["ok"] and len(decoded.skipped) == 1
    with pytest.raises(DecodeError):
        decode_object("PodGroup", b"{}")  # never the bare, ambiguous kind


def test_volcano_and_coscheduling_podgroups_with_the_same_name_do_not_collide() -> None:
    s = _store()
    volcano = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "mpi-bench", "namespace": "hpc"},
        "spec": {"minMember": 2, "queue": "default"},
        "status": {"phase": "Pending"},
    }
    cosched = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "mpi-bench", "namespace": "hpc"},
        "spec": {"minMember": 8, "scheduleTimeoutSeconds": 120, "minResources": {"nvidia.com/gpu": "64"}},
        "status": {"phase": "Scheduling", "scheduled": 5, "running": 0},
    }
    _add(s, VPG, volcano)
    _add(s, CPG, cosched)
    for i in range(8):
        _add(s, "Pod", pod(f"cs-{i}", namespace="hpc", labels={"scheduling.x-k8s.io/pod-group": "mpi-bench"}))
    for i in range(2):
        _add(
            s,
            "Pod",
            pod(f"vc-{i}", namespace="hpc", annotations={"scheduling.k8s.io/group-name": "mpi-bench"}),
        )
    snap = s.snapshot()
    v = snap.objects[("scheduling.volcano.sh", "PodGroup", "hpc", "mpi-bench")]
    c = snap.objects[("scheduling.x-k8s.io", "PodGroup", "hpc", "mpi-bench")]
    assert isinstance(v, PodGroup) and isinstance(c, PodGroup)
    assert (v.min_member, v.queue, c.min_member, c.timeout_s) == (2, "default", 8, 120)
    cs_job = snap.jobs[("hpc", "PodGroup", "mpi-bench")]
    vc_job = snap.jobs[("hpc", VPG, "mpi-bench")]
    assert (cs_job.members, cs_job.min_members, cs_job.backends) == (8, 8, ("coscheduling",))
    assert cs_job.gang is not None and cs_job.gang.timeout_s == 120
    assert (vc_job.members, vc_job.min_members, vc_job.backends) == (2, 2, ("volcano",))
    # a relist of one kind leaves the other alone
    s.replace(CPG, [])
    snap = s.snapshot()
    assert ("scheduling.volcano.sh", "PodGroup", "hpc", "mpi-bench") in snap.objects
    assert ("scheduling.x-k8s.io", "PodGroup", "hpc", "mpi-bench") not in snap.objects
    assert snap.jobs[("hpc", "PodGroup", "mpi-bench")].backends == ()


def test_relist_replaces_backend_objects_of_that_kind() -> None:
    s = _store()
    fixture = _load("kueue_quota_borrowing.json")
    for cq in fixture["clusterqueues"]:
        _add(s, CQ, cq)
    keep = decode_object(CQ, json.dumps(fixture["clusterqueues"][1]).encode())
    assert isinstance(keep, ClusterQueue)
    s.replace(CQ, [keep], "99")
    assert [k[3] for k in s.snapshot().objects] == ["research-a100"]
    assert s.resource_versions[CQ] == "99"
    assert list(s.snapshot().queues) == ["root.research", "root.research.research-a100"]


def test_a_cluster_without_backends_never_builds_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object) -> None:
        raise AssertionError("backend work on a pods-only cluster")

    monkeypatch.setattr(Store, "_evidence", boom)
    monkeypatch.setattr(Store, "_queues", boom)
    s = _store()
    _add(s, "Pod", pod("p", gpus=1))
    snap = s.snapshot()
    assert snap.jobs[("team-a", "Pod", "p")].backends == ()
    assert snap.queues == {} and snap.objects == {}


def test_policy_from_snapshot_without_observed_queues_is_the_base() -> None:
    base = Policy(queues=(QueueSpec("root.x"),))
    assert policy_from_snapshot(_store().snapshot(), base) is base


# -- pod messages --------------------------------------------------------------------------------


def test_unschedulable_message_is_parsed_into_fragments() -> None:
    message = (
        "0/7 nodes are available: 3 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint "
        "{nvidia.com/gpu: present}, 1 node(s) were unschedulable, 1 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/7 nodes are available: "
        "7 No preemption victims found for incoming pod."
    )
    assert parse_unschedulable(message) == (
        ReasonFragment(3, ReasonCode.RESOURCES, "Insufficient nvidia.com/gpu"),
        ReasonFragment(2, ReasonCode.CONSTRAINTS, "node(s) had untolerated taint {nvidia.com/gpu: present}"),
        ReasonFragment(1, ReasonCode.NODE_UNAVAILABLE, "node(s) were unschedulable"),
        ReasonFragment(1, ReasonCode.CONSTRAINTS, "node(s) didn't match Pod's node affinity/selector"),
    )
    assert pod_reason(message)[0] == ReasonCode.RESOURCES
    only_affinity = (
        "0/4 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }."
    )
    assert pod_reason(only_affinity)[0] == ReasonCode.CONSTRAINTS
    spread = "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints."
    assert pod_reason(spread)[0] == ReasonCode.TOPOLOGY
    sibling = "cannot find enough sibling pods, current pods number: 5, minMember of group: 8"
    assert pod_reason(sibling)[0] == ReasonCode.GANG_INCOMPLETE
    assert pod_reason("podGroup hpc/mpi-bench failed recently")[0] == ReasonCode.GANG_TIMEOUT
    # a message no known plugin writes is Unschedulable with the message as its evidence (issue 11)
    [unknown] = parse_unschedulable("something else entirely")
    assert unknown.code == ReasonCode.UNSCHEDULABLE and unknown.detail == "something else entirely"
    assert pod_reason("something else entirely")[0] == ReasonCode.UNSCHEDULABLE
