"""Grouping pods into jobs and gangs, and reading a job's state (SCHEDULERS.md §1.2-§1.4, §2.3).

A "job" is what a user submitted: a batch Job and its pods, a Deployment serving a model, a
YuniKorn application, or a lone pod. The key of a pod's job is found from its controller owner
(a ReplicaSet folds into its Deployment by the ``pod-template-hash`` label, as kubectl does; a
JobSet's child Job and a LeaderWorkerSet's StatefulSet fold into their top owner by the labels
those controllers stamp on every pod, so the row is the highest recognised kind), then a YuniKorn
application id, then a Volcano or coscheduling pod-group name, else the pod itself. The job's
row is derived from its pods, its owner object and, when a queueing backend is present, that
backend's evidence (a Kueue Workload, a PodGroup, the queue tree: :mod:`hpctop.backends`)
each time one of them changes; nothing here keeps state of its own. The labels and annotations
each controller stamps are declared in its backend's folder (:mod:`hpctop.backends`); how they
group pods is here, in one place, because one pod may carry several backends' marks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from operator import attrgetter
from typing import TypeVar

from hpctop.backends import registry
from hpctop.backends.jobset.read import JOBSET_NAME
from hpctop.backends.kube_scheduler.read import pod_reason
from hpctop.backends.kubeflow.read import KUBEFLOW_KINDS
from hpctop.backends.lws.read import LWS_NAME
from hpctop.backends.slinky.read import SLINKY_PARTITION, SUNK_PARTITION
from hpctop.backends.volcano.read import VOLCANO_GROUP_KEYS, VOLCANO_PHASES, VOLCANO_PODGROUP
from hpctop.backends.yunikorn.read import APP_ID_KEYS, POLICY_PARAMETERS, TASK_GROUPS
from hpctop.model.backends.evidence import JobEvidence, by_precedence
from hpctop.model.decode import VOLCANO_JOB_KIND
from hpctop.model.fractions import KAI_RESERVATION_NAMESPACE, RESERVATION_KIND, reservation_job_key
from hpctop.model.objects import (
    BACKFILLED_ANNOTATION,
    VOLCANO_BATCH_GROUP,
    Gang,
    Job,
    JobKey,
    JobKind,
    OwnerRef,
    Pod,
    Reason,
    Workload,
)
from hpctop.model.resources import ZERO, Resources
from hpctop.model.states import JobState, ReasonCode

SERVICE_KINDS = frozenset({"Deployment", "StatefulSet", "LeaderWorkerSet"})
#: owners that group other owners' pods: a Workload they control is a part, not a job row
GROUPING_KINDS = frozenset({"JobSet", "LeaderWorkerSet", "TrainJob"})
VOLCANO_PODGROUP_KIND = VOLCANO_PODGROUP
#: the job key kind of a bare-pod gang of the native API (pods naming it in spec.schedulingGroup)
NATIVE_PODGROUP_KIND = "PodGroup.scheduling.k8s.io"
#: (KAI-Scheduler's ``kai.scheduler/queue`` last: its PodGroup's queue is read first, as evidence)
QUEUE_LABELS = ("yunikorn.apache.org/queue", "kueue.x-k8s.io/queue-name", "queue", "kai.scheduler/queue")
#: partitions of hpctop's own model a job may name (SUNK's is one; Slinky's is Slurm's:
#: :mod:`hpctop.backends.slinky.read`)
PARTITION_KEYS = ("hpctop.io/partition", SUNK_PARTITION)
#: owners whose pods are node services (one per node), not jobs: the device plugin, GFD, DCGM
#: exporter, CNI agents... They are shown per node and never as a job row
NODE_SERVICE_KINDS = frozenset({"DaemonSet"})
USER_KEYS = ("hpctop.io/user", "user")
_BY_NAME = attrgetter("name")


def job_key_for_owner(namespace: str, owner: OwnerRef) -> JobKey:
    """The job key of an owner reference (a vcjob is named with its group: it shares kind Job)."""
    if owner.kind == "Job" and owner.api_version.startswith(VOLCANO_BATCH_GROUP + "/"):
        return (namespace, VOLCANO_JOB_KIND, owner.name)
    return (namespace, owner.kind, owner.name)


def job_key_for_pod(pod: Pod) -> JobKey:
    """Which job a pod belongs to."""
    owner = pod.owner
    if owner is not None:
        kind = owner.kind
        if kind == "ReplicaSet":
            template_hash = pod.labels.get("pod-template-hash")
            if template_hash and owner.name.endswith("-" + template_hash):
                return (pod.namespace, "Deployment", owner.name[: -len(template_hash) - 1])
        elif kind == "Job":
            jobset = pod.labels.get(JOBSET_NAME)
            if jobset:
                return (pod.namespace, "JobSet", jobset)
        elif kind == "StatefulSet":
            lws = pod.labels.get(LWS_NAME)
            if lws:
                return (pod.namespace, "LeaderWorkerSet", lws)
        return job_key_for_owner(pod.namespace, owner)
    if pod.namespace == KAI_RESERVATION_NAMESPACE:
        reservation = reservation_job_key(pod.namespace, pod.labels)
        if reservation is not None:
            return reservation
    for key in APP_ID_KEYS:
        app = pod.labels.get(key) or (pod.annotations.get(key) if key.startswith("yunikorn") else None)
        if app:
            return (pod.namespace, "Application", app)
    if pod.scheduling_group:
        return (pod.namespace, NATIVE_PODGROUP_KIND, pod.scheduling_group)
    group = pod.labels.get("scheduling.x-k8s.io/pod-group")
    if group:
        return (pod.namespace, "PodGroup", group)
    for key in VOLCANO_GROUP_KEYS:
        group = pod.annotations.get(key)
        if group:
            return (pod.namespace, VOLCANO_PODGROUP_KIND, group)
    return (pod.namespace, "Pod", pod.name)


def _first(keys: Iterable[str], *maps: dict[str, str]) -> str | None:
    for key in keys:
        for mapping in maps:
            value = mapping.get(key)
            if value:
                return value
    return None


def parse_gang(annotations: dict[str, str]) -> Gang | None:
    """A YuniKorn gang from its task-groups annotation (malformed JSON means no gang).

    Cached by the two annotation strings: every pod of a gang carries the same ones, and parsing
    the JSON again for each derived job was 0.17 s of the 0.93 s the watch profile took (P3).
    """
    raw = annotations.get(TASK_GROUPS)
    if not raw:
        return None
    return _parse_gang(raw, annotations.get(POLICY_PARAMETERS, ""))


@lru_cache(maxsize=1024)
def _parse_gang(raw: str, parameters: str) -> Gang | None:
    try:
        groups = json.loads(raw)
        min_member = sum(int(g.get("minMember", 0)) for g in groups)
        name = ",".join(str(g.get("name", "")) for g in groups)
    except (ValueError, TypeError, AttributeError):
        return None
    style, timeout = "soft", None
    for part in parameters.split():
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
            # YuniKorn writes it when the queue's quota is used up
            return Reason(ReasonCode.QUOTA_EXCEEDED, "pod:PodScheduled", cond.message)
        if cond.reason == "Unschedulable":
            code, fragments = pod_reason(cond.message)
            if pod.nominated_node and code == ReasonCode.RESOURCES:
                # kube-scheduler preempted victims on that node and waits for them to leave
                # (status.nominatedNodeName): the pod is preempting its way in, not waiting idle
                message = f"preempting on node {pod.nominated_node}: {cond.message}"
                return Reason(ReasonCode.PREEMPTING, "pod:nominatedNodeName", message, fragments)
            return Reason(code, "pod:PodScheduled", cond.message, fragments)
    return None


def _gang(workload: Workload | None, ann: dict[str, str], evidence: JobEvidence | None) -> Gang | None:
    """The gang, first match wins (§1.2 step 3): YuniKorn task groups, PodGroup, Kueue, owner."""
    gang = parse_gang(ann)
    if gang is not None:
        return gang
    if evidence is not None and evidence.pod_group is not None:
        pg = evidence.pod_group
        return Gang(name=pg.name, min_member=max(pg.min_member, 1), style="hard", timeout_s=pg.timeout_s)
    if evidence is not None and evidence.kueue is not None and evidence.kueue.pod_sets:
        # Kueue reserves quota for the whole Workload at once (minCount with partial admission)
        sets = evidence.kueue.pod_sets
        total = sum(ps.count if ps.min_count is None else ps.min_count for ps in sets)
        return Gang(name=evidence.kueue.name, min_member=max(total, 1), style="hard")
    if workload is not None:
        if workload.min_available:
            return Gang(name=workload.name, min_member=workload.min_available, style="hard")
        if workload.kind in KUBEFLOW_KINDS and workload.groups:
            # a training job without a gang scheduler still needs every replica to rendezvous
            return Gang(name=workload.name, min_member=max(workload.parallelism, 1), style="hard")
    return None


def _state(workload: Workload | None, members: list[Pod], min_members: int) -> JobState:
    if workload is not None:
        if (
            workload.phase is not None
            and workload.kind == VOLCANO_JOB_KIND
            and workload.phase in VOLCANO_PHASES
        ):
            return VOLCANO_PHASES[workload.phase]
        if (
            workload.condition("Complete")
            or workload.condition("Succeeded")
            or workload.condition("Completed")
        ):
            return JobState.COMPLETED
        failed = workload.condition("Failed")
        if failed:
            return JobState.TIMEOUT if failed.reason == "DeadlineExceeded" else JobState.FAILED
        if workload.condition("Restarting") and workload.kind in KUBEFLOW_KINDS:
            return JobState.REQUEUED
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


def is_capacity_reservation(workload: Workload | None, pods: Iterable[Pod]) -> bool:
    """Whether an owner and its pods only hold capacity in reserve: ``pause`` containers at a
    negative priority and nothing else (Kubernetes' "Overprovision Node Capacity for a Cluster"
    placeholders, cluster-autoscaler's overprovisioning Deployment). They are kube-scheduler's
    reservation, held until a pod of higher priority preempts them: shown per node, never as a
    user's job. The pods decide (only they carry the resolved priority): a pause Deployment whose
    pods are at priority 0 is a test workload and stays a job. A YuniKorn placeholder is a pause
    pod too, but it stands in for its gang's members and stays with their job."""
    if workload is not None and not workload.capacity_reservation:
        return False
    pods = list(pods)
    for pod in pods:
        if pod.capacity_reservation:
            break
    else:
        # no pod holds capacity: the answer is False whatever the placeholders, and reading a
        # plain bool per pod spares three annotation/label lookups each (P3 profile: 12 % of a
        # watch event went to ``is_placeholder`` here)
        return False
    listed = [p for p in pods if not p.is_placeholder]
    return bool(listed) and all(p.capacity_reservation for p in listed)


def derive_job(
    key: JobKey,
    pods: Iterable[Pod],
    workload: Workload | None,
    evidence: JobEvidence | None = None,
    previous: tuple[Pod, Job] | None = None,
) -> Job | None:
    """The job row for ``key`` from its pods, owner object and backend evidence.

    ``None`` when there are neither pods nor an owner, and for an owner that is only a part of a
    bigger job (a JobSet's child Job) while it has no pods of its own. ``previous`` (a pod and
    the row derived from it before; see :func:`_derive_lone_pod`) only saves work: the row is the
    same with or without it.
    """
    if key[1] in NODE_SERVICE_KINDS or key[1] == RESERVATION_KIND:
        return None
    all_pods = list(pods)
    if len(all_pods) > 1:  # (a lone pod, the watch path's common case, skips the key call)
        all_pods.sort(key=_BY_NAME)
    if is_capacity_reservation(workload, all_pods):
        return None
    if workload is None and evidence is None and len(all_pods) == 1 and not all_pods[0].is_placeholder:
        return _derive_lone_pod(key, all_pods[0], previous)
    return _derive_general(key, all_pods, workload, evidence)


def _derive_general(
    key: JobKey, all_pods: list[Pod], workload: Workload | None, evidence: JobEvidence | None
) -> Job | None:
    """:func:`derive_job` for any job (``all_pods`` sorted by name)."""
    if workload is None and not all_pods:
        return None
    if (
        not all_pods
        and workload is not None
        and workload.owner is not None
        and workload.owner.kind in GROUPING_KINDS
    ):
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
    elif sample is not None:
        # a job of bare pods reads its sample pod's maps as they are: no copies (objects are
        # never mutated), which is ~0.3 KiB less per job held (P2) and two dicts less per derive
        ann = sample.annotations
        labels = sample.labels
    gang = _gang(workload, ann, evidence)
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
    if gang is not None and evidence is not None and evidence.pod_group is not None:
        # a PodGroup's minMember is the gang's size whatever number of pods exist yet: 3 pods of
        # a minMember-4 group are a gang missing a member (coscheduling's "cannot find enough
        # sibling pods"), not a complete gang of 3
        min_members = gang.min_member
    state = _state(workload, members, min_members)
    live = [p for p in members if not p.is_terminal]
    reasons: tuple[Reason, ...] = ()
    if evidence is not None:
        state = registry.job_state(evidence, state, any(p.node_name for p in live))
        if state.is_pending or state == JobState.STARTING:
            found = registry.job_reasons(evidence, state, len(live))
            pod_level = _observed_reason(live) if state == JobState.PENDING else None
            if pod_level is not None:
                found.append(pod_level)
            reasons = by_precedence(found)
    elif state == JobState.PENDING:
        pod_level = _observed_reason(live)
        placeholder_pods = [p for p in all_pods if p.is_placeholder]
        if gang is not None and placeholder_pods:
            bound = sum(1 for p in placeholder_pods if p.node_name)
            if bound < gang.min_member:
                message = f"{bound} of {gang.min_member} placeholders allocated"
                reasons = (Reason(ReasonCode.GANG_INCOMPLETE, "yk:placeholders", message),)
        if pod_level is not None:
            reasons = by_precedence([*reasons, pod_level])
    pending = tuple(p.key for p in live if p.node_name is None and p.deleted is None)
    running = sum(1 for p in live if p.phase == "Running" and p.node_name)
    per_member = (
        sample.requests if sample is not None else (workload.template_requests if workload else Resources())
    )
    if workload is not None and (sample is None or state == JobState.HELD):
        per_member = workload.template_requests
    requested_total = _requested_total(workload, members, members_count, evidence)
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
        queue=_queue(labels, ann, workload, evidence),
        partition=_first(PARTITION_KEYS, labels, ann),
        priority_value=sample.priority if sample is not None else None,
        priority_class=priority_class,
        state=state,
        observed_reason=reasons[0] if reasons else None,
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
        restart_count=max(
            max((p.restart_count for p in members), default=0),
            _requeues(ann),
            evidence.kueue.requeue_count if evidence is not None and evidence.kueue is not None else 0,
        ),
        labels=labels,
        reasons=reasons,
        backends=evidence.backends if evidence is not None else (),
        backend_objects=tuple(o.key for o in (evidence.kueue, evidence.pod_group) if o is not None)
        if evidence is not None
        else (),
        requested_total=requested_total,
        slurm_partition=_first((SLINKY_PARTITION,), labels, ann),
        one_per_node=sample.one_per_node if sample is not None else False,
        backfilled=any(p.annotations.get(BACKFILLED_ANNOTATION) == "true" for p in members),
    )


def _requested_total(
    workload: Workload | None,
    members: list[Pod],
    members_count: int,
    evidence: JobEvidence | None,
) -> Resources | None:
    """The job's whole request, summed per role (None when it is ``per_member`` x members).

    First the owner's roles (Kubeflow replica specs, JobSet replicated jobs, vcjob tasks, LWS
    leader and workers: each role's template times its replicas), then Kueue's pod sets (what
    Kueue counts against quota, the only template a suspended TrainJob shows), then the pods
    themselves when every member exists. One pod standing for all members made an MPI job
    with a CPU-only launcher and GPU workers show 0 GPUs.
    """
    if workload is not None and workload.groups:
        total = sum((g.requests.scale(g.replicas) for g in workload.groups), ZERO)
        if total != ZERO:
            return total
    if evidence is not None and evidence.kueue is not None and not members:
        sets = evidence.kueue.pod_sets
        total = sum((ps.requests.scale(ps.count) for ps in sets), ZERO)
        if total != ZERO:
            return total
    live = [p for p in members if not p.is_terminal]
    if len(live) > 1 and len(live) == members_count and any(p.requests != live[0].requests for p in live):
        return sum((p.requests for p in live), ZERO)
    return None


# The members the lone-pod path reads, bound once: ``JobState.RUNNING`` goes through the enum
# metaclass's attribute hook on each access (~0.1 us in CPython 3.11), and this path runs once per
# watch event (issue 16, P3; bench/README.md, session 12 watch).
_PENDING, _RUNNING, _STARTING, _COMPLETING = (
    JobState.PENDING,
    JobState.RUNNING,
    JobState.STARTING,
    JobState.COMPLETING,
)
_COMPLETED, _FAILED, _OOM = JobState.COMPLETED, JobState.FAILED, JobState.OOM
_NOT_STARTED = (JobState.PENDING, JobState.HELD)
#: what ``JobState.is_finished`` answers, read without the property (its lookup on an enum
#: member is ~0.2 us in CPython 3.11; the lone-pod row is derived once per watch event, P3)
_FINISHED_STATES = frozenset(s for s in JobState if s.is_finished)
_SERVICE, _BATCH = JobKind.SERVICE, JobKind.BATCH


def _lone_state(pod: Pod) -> JobState:
    """:func:`_state` for one pod, no owner object, a gang minimum of 1 (the same answers)."""
    if pod.phase not in ("Succeeded", "Failed"):  # live
        if pod.deleted is not None:
            return _COMPLETING
        if pod.node_name:
            return _RUNNING if pod.phase == "Running" else _STARTING
        return _PENDING
    if pod.phase == "Failed":
        return _OOM if pod.terminated_reason == "OOMKilled" else _FAILED
    return _COMPLETED


_T = TypeVar("_T")


def _single(held: tuple[_T, ...], item: _T) -> tuple[_T, ...]:
    """``(item,)``, or ``held`` when it is that tuple already (the previous row's).

    Why: every tuple a row keeps is a GC-tracked object that lives until the row is replaced, and
    the lone-pod row is derived once per watch event: building ``(pod.key,)`` twice and
    ``(node,)`` each time made ~4 of the ~6 tracked objects an event leaves behind until the next
    snapshot, and the young collections they trigger were ~25 % of an event's CPU (issue 16, P3;
    bench/README.md, session 12 watch). Equal values, so the row is the same.
    """
    return held if len(held) == 1 and held[0] == item else (item,)


def _derive_lone_pod(key: JobKey, pod: Pod, previous: tuple[Pod, Job] | None = None) -> Job:
    """:func:`derive_job` for a job of one pod, no owner object, no backend evidence.

    Why: the most common job row on a busy cluster (bare pods, single-pod Jobs, and the watch
    payload's pods, each in its own namespace) and the one derived per watch event: the general
    derivation spends most of its ~30 us on lists, sums and sorts over one member (P3 profile,
    bench/README.md). Every value here is what the general path computes for these inputs
    (``tests/test_jobs_lone_pod.py`` compares the two); anything else takes the general path.

    ``previous``: the pod this job's current row was derived from and that row (the store passes
    it when the row was derived by this path or by the general one without an owner object or
    backend evidence: then the row's ``labels`` is that pod's own map). When the pod's labels and
    kept annotations are unchanged, the fields read from them (user, queue, partitions) are taken
    from that row instead of searched again: a watch event that changes a pod's status re-derives
    only what the status decides (``tests/model/test_store_incremental.py`` compares the rows
    with a derivation from scratch after random event sequences).
    """
    ann = pod.annotations
    labels = pod.labels
    gang = parse_gang(ann)
    state = _lone_state(pod)
    live = pod.phase not in ("Succeeded", "Failed")  # not pod.is_terminal, without the property
    reasons: tuple[Reason, ...] = ()
    if state == _PENDING:
        pod_level = _observed_reason([pod]) if live else None
        if pod_level is not None:
            reasons = (pod_level,)
    node = pod.node_name
    start_time = pod.started if state not in _NOT_STARTED else None
    namespace, kind, name = key
    prior = previous[1] if previous is not None else None
    members = _single(prior.pods if prior is not None else (), pod.key)
    nodes = _single(prior.nodes if prior is not None else (), node) if live and node else ()
    if (
        previous is not None
        and previous[1].labels is previous[0].labels
        # ``is`` first: the watch path hands the held pod's own maps on (hpctop.model.pod_events),
        # and a dict compared with itself by ``==`` still walks every item (0.8 us a row, P3)
        and (previous[0].labels is labels or previous[0].labels == labels)
        and (previous[0].annotations is ann or previous[0].annotations == ann)
    ):
        row = previous[1]
        user, queue, partition, slurm_partition = row.user, row.queue, row.partition, row.slurm_partition
    else:
        user = _first(USER_KEYS, labels) or namespace
        queue = _queue(labels, ann, None, None)
        partition = _first(PARTITION_KEYS, labels, ann)
        slurm_partition = _first((SLINKY_PARTITION,), labels, ann)
    return Job(
        key,
        namespace,
        name,
        _SERVICE if kind in SERVICE_KINDS else _BATCH,
        kind,
        pod.uid,
        user,
        queue,
        partition,
        pod.priority,
        pod.priority_class or None,
        state,
        reasons[0] if reasons else None,
        pod.created,
        start_time,
        pod.finished if state in _FINISHED_STATES else None,
        pod.requests,
        1,
        1,
        1 if live and pod.phase == "Running" and node else 0,
        members if live and node is None and pod.deleted is None else (),
        members,
        nodes,
        pod.gpu_models,
        pod.node_selector,
        pod.tolerations,
        pod.scheduler_name,
        tuple(sorted(set(pod.scheduling_gates))) if live and pod.scheduling_gates else (),
        pod.active_deadline_seconds or None,
        gang,
        max(pod.restart_count, _requeues(ann), 0),
        labels,
        reasons,
        (),
        (),
        None,
        slurm_partition,
        pod.one_per_node,  # as the general path: the pod's anti-affinity to itself
        ann.get(BACKFILLED_ANNOTATION) == "true",
    )


def _queue(
    labels: dict[str, str], ann: dict[str, str], workload: Workload | None, evidence: JobEvidence | None
) -> str | None:
    """§1.2 step 5: Kueue's ClusterQueue path → YuniKorn's queue → Volcano's → the owner's own."""
    if evidence is not None and evidence.kueue is not None and evidence.queue:
        return evidence.queue
    yunikorn = _first(QUEUE_LABELS[:1], labels, ann)
    if yunikorn:
        return yunikorn
    if evidence is not None and evidence.queue:
        return evidence.queue
    return _first(QUEUE_LABELS, labels, ann) or (workload.queue if workload is not None else None)


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
