"""Grouping pods into jobs and gangs, and reading a job's state (SCHEDULERS.md §1.2-§1.4, §2.3).

A "job" is what a user submitted: a batch Job and its pods, a Deployment serving a model, a
YuniKorn application, or a lone pod. The key of a pod's job is found from its controller owner
(a ReplicaSet folds into its Deployment by the ``pod-template-hash`` label, as kubectl does), then
a YuniKorn application id, then a coscheduling pod-group label, else the pod itself. The job's
row is derived from its pods and its owner object each time either changes; nothing here keeps
state of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from hpctop.model.objects import (
    Gang,
    Job,
    JobKey,
    JobKind,
    Pod,
    Reason,
    Workload,
)
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode

SERVICE_KINDS = frozenset({"Deployment", "StatefulSet", "LeaderWorkerSet"})
QUEUE_LABELS = ("yunikorn.apache.org/queue", "kueue.x-k8s.io/queue-name", "queue")
APP_ID_KEYS = ("yunikorn.apache.org/app-id", "applicationId", "spark-app-selector")
PARTITION_KEYS = (
    "hpctop.io/partition",
    "sunk.coreweave.com/partition",
    "slurmjob.slinky.slurm.net/partition",
)
USER_KEYS = ("hpctop.io/user", "user")
TASK_GROUPS = "yunikorn.apache.org/task-groups"
POLICY_PARAMETERS = "yunikorn.apache.org/schedulingPolicyParameters"


def job_key_for_pod(pod: Pod) -> JobKey:
    """Which job a pod belongs to."""
    owner = pod.owner
    if owner is not None:
        if owner.kind == "ReplicaSet":
            template_hash = pod.labels.get("pod-template-hash")
            if template_hash and owner.name.endswith("-" + template_hash):
                return (pod.namespace, "Deployment", owner.name[: -len(template_hash) - 1])
        return (pod.namespace, owner.kind, owner.name)
    for key in APP_ID_KEYS:
        app = pod.labels.get(key) or (pod.annotations.get(key) if key.startswith("yunikorn") else None)
        if app:
            return (pod.namespace, "Application", app)
    group = pod.labels.get("scheduling.x-k8s.io/pod-group")
    if group:
        return (pod.namespace, "PodGroup", group)
    return (pod.namespace, "Pod", pod.name)


def _first(keys: Iterable[str], *maps: dict[str, str]) -> str | None:
    for key in keys:
        for mapping in maps:
            value = mapping.get(key)
            if value:
                return value
    return None


def parse_gang(annotations: dict[str, str]) -> Gang | None:
    """A YuniKorn gang from its task-groups annotation (malformed JSON means no gang)."""
    raw = annotations.get(TASK_GROUPS)
    if not raw:
        return None
    try:
        groups = json.loads(raw)
        min_member = sum(int(g.get("minMember", 0)) for g in groups)
        name = ",".join(str(g.get("name", "")) for g in groups)
    except (ValueError, TypeError, AttributeError):
        return None
    style, timeout = "soft", None
    for part in annotations.get(POLICY_PARAMETERS, "").split():
        key, _, value = part.partition("=")
        if key == "gangSchedulingStyle":
            style = value.lower()
        elif key == "placeholderTimeoutInSeconds" and value.isdigit():
            timeout = int(value)
    return Gang(name=name, min_member=max(min_member, 1), style=style, timeout_s=timeout)


def _requeues(annotations: dict[str, str]) -> int:
    """Requeues recorded on the owner: a requeue makes fresh pods whose restartCount is 0."""
    for key in ("hpctop.io/requeue-count", "jobset.sigs.k8s.io/restart-attempt"):
        value = annotations.get(key, "")
        if value.isdigit():
            return int(value)
    return 0


def _observed_reason(pods: list[Pod]) -> Reason | None:
    for pod in pods:
        cond = pod.scheduled
        if cond is None or cond.status == "True":
            continue
        if cond.reason == "SchedulingGated":
            return Reason(
                ReasonCode.GATED, "pod:PodScheduled", cond.message or ",".join(pod.scheduling_gates)
            )
        if cond.reason == "SchedulingSkipped":
            return Reason(ReasonCode.QUOTA_EXCEEDED, "pod:PodScheduled", cond.message)
        if cond.reason == "Unschedulable":
            return Reason(ReasonCode.RESOURCES, "pod:PodScheduled", cond.message)
    return None


def _state(workload: Workload | None, members: list[Pod], min_members: int) -> JobState:
    if workload is not None:
        if workload.condition("Complete") or workload.condition("Succeeded"):
            return JobState.COMPLETED
        failed = workload.condition("Failed")
        if failed:
            return JobState.TIMEOUT if failed.reason == "DeadlineExceeded" else JobState.FAILED
    live = [p for p in members if not p.is_terminal]
    if workload is not None and workload.suspend and not any(p.node_name for p in live):
        return JobState.HELD
    if any(p.deleted is not None for p in live) and not any(p.deleted is None for p in live):
        return JobState.COMPLETING
    running = sum(1 for p in live if p.phase == "Running" and p.node_name)
    bound = sum(1 for p in live if p.node_name)
    if running and running >= min(min_members, len(live)):
        return JobState.RUNNING
    if bound:
        return JobState.STARTING
    if live:
        return JobState.PENDING
    if members:
        if any(p.terminated_reason == "OOMKilled" for p in members if p.phase == "Failed"):
            return JobState.OOM
        if any(p.phase == "Failed" for p in members):
            return JobState.FAILED
        if workload is None or workload.kind not in SERVICE_KINDS:
            return JobState.COMPLETED
    return JobState.PENDING


def derive_job(key: JobKey, pods: Iterable[Pod], workload: Workload | None) -> Job | None:
    """The job row for ``key`` from its pods and owner object; ``None`` when neither exists."""
    all_pods = sorted(pods, key=lambda p: p.name)
    if workload is None and not all_pods:
        return None
    members = [p for p in all_pods if not p.is_placeholder]
    placeholders = len(all_pods) - len(members)
    sample = members[0] if members else None
    ann: dict[str, str] = {}
    labels: dict[str, str] = {}
    if workload is not None:
        ann.update(workload.template_annotations)
        ann.update(workload.annotations)
        labels.update(workload.template_labels)
        labels.update(workload.labels)
    if sample is not None:
        ann = {**sample.annotations, **ann}
        labels = {**sample.labels, **labels}
    gang = parse_gang(ann)
    if gang is not None and placeholders:
        gang = Gang(gang.name, gang.min_member, gang.style, gang.timeout_s, placeholders)
    if workload is not None and not workload.condition("Complete") and not workload.condition("Failed"):
        expected = workload.parallelism
        if workload.completions is not None:
            expected = min(expected, max(workload.completions - workload.succeeded, 0)) or expected
        members_count = max(expected, len([p for p in members if not p.is_terminal]))
    else:
        members_count = len(members) or (workload.parallelism if workload else 0)
    members_count = max(members_count, 1)
    min_members = min(gang.min_member, members_count) if gang else 1
    state = _state(workload, members, min_members)
    live = [p for p in members if not p.is_terminal]
    pending = tuple(p.key for p in live if p.node_name is None and p.deleted is None)
    running = sum(1 for p in live if p.phase == "Running" and p.node_name)
    per_member = (
        sample.requests if sample is not None else (workload.template_requests if workload else Resources())
    )
    if workload is not None and (sample is None or state == JobState.HELD):
        per_member = workload.template_requests
    starts = [p.started for p in members if p.started is not None]
    ends = [p.finished for p in members if p.finished is not None]
    submit = workload.created if workload is not None else min(p.created for p in members or all_pods)
    # A batch Job's status.startTime is set when the Job is created on a live cluster, before any
    # pod runs: a pending or held job has not started, whatever that field says.
    start_time = None
    if state not in (JobState.PENDING, JobState.HELD):
        if workload is not None and workload.start_time:
            start_time = workload.start_time
        elif starts:
            start_time = min(starts)
    end_time = None
    if state.is_finished:
        end_time = workload.completion_time if workload is not None and workload.completion_time else None
        if end_time is None and ends:
            end_time = max(ends)
    priority_class = (sample.priority_class if sample else None) or (
        workload.priority_class if workload else None
    )
    namespace, kind, name = key
    return Job(
        key=key,
        namespace=namespace,
        name=name,
        kind=JobKind.SERVICE if kind in SERVICE_KINDS else JobKind.BATCH,
        owner_kind=kind,
        uid=workload.uid if workload is not None else (sample.uid if sample else ""),
        user=_first(USER_KEYS, labels) or namespace,
        queue=_first(QUEUE_LABELS, labels, ann),
        partition=_first(PARTITION_KEYS, labels, ann),
        priority_value=sample.priority if sample is not None else None,
        priority_class=priority_class,
        state=state,
        observed_reason=_observed_reason(live) if state == JobState.PENDING else None,
        submit_time=submit,
        start_time=start_time,
        end_time=end_time,
        per_member=per_member,
        members=members_count,
        min_members=min_members,
        running_members=running,
        pending_pods=pending,
        pods=tuple(p.key for p in members),
        nodes=tuple(sorted({p.node_name for p in live if p.node_name})),
        gpu_models=sample.gpu_models if sample is not None else (),
        node_selector=sample.node_selector
        if sample is not None
        else (workload.template_node_selector if workload else ()),
        tolerations=sample.tolerations if sample is not None else (),
        scheduler_name=sample.scheduler_name if sample is not None else "",
        scheduling_gates=tuple(sorted({g for p in live for g in p.scheduling_gates})),
        time_limit=(sample.active_deadline_seconds if sample is not None else None)
        or (workload.active_deadline_seconds if workload else None),
        gang=gang,
        restart_count=max(max((p.restart_count for p in members), default=0), _requeues(ann)),
        labels=labels,
    )


def cancelled(job: Job, when: float) -> Job:
    """The tombstone row kept when a job's objects are deleted before it finished."""
    from dataclasses import replace

    return replace(
        job,
        state=JobState.CANCELLED,
        end_time=when,
        pending_pods=(),
        running_members=0,
        nodes=(),
        observed_reason=None,
    )
