"""FakeApiServer: kmock's KubernetesEmulator taught the parts of an API server the watch contract needs.

Why a subclass and not kmock's emulator as it is: the emulator (kmock 0.8) answers lists with the
literal resourceVersion ``"..."``, ignores ``resourceVersion`` on watches (it replays everything),
never sends a 410, sends no bookmarks and ignores ``timeoutSeconds`` (RELIABILITY.md §5.1). A
reflector tested against that would pass while being wrong about exactly the things that break
in production. So this subclass keeps its own state with a global resourceVersion counter and an
event history, and serves lists and watches from it; everything else of kmock stays usable:
request recording (``fake.requests``), the DSL for scripted answers, which take priority over
these defaults (``fake[kmock.action.WATCH, PODS_RES][0:1] << 429 << {"Retry-After": "3"}``),
and the real HTTP server on 127.0.0.1.

What it does (RELIABILITY.md §5.2, items 1-5 and part of 11):

- a global RV stamped on every write and returned as the list RV; ``limit``/``continue`` pages
  served from a snapshot taken at the first page, as etcd would (a token older than the history
  window gets 410);
- label selectors (``a=b``, ``a!=b``, ``a``, ``!a``) on lists and watches;
- watch from an RV: the events after it, then live ones; an RV older than the history window gets
  410, in-stream by default (as a real server does) or as an HTTP status; an RV of ``""``/``"0"``
  starts with synthetic ADDED events;
- bookmarks every ``bookmark_interval`` seconds of loop time when ``allowWatchBookmarks=true``;
- ``timeoutSeconds``: a clean end after that many seconds of loop time;
- scripted stream faults per watch request (:class:`WatchFault`): drop the connection after N
  events (a truncated chunked body), stall, send garbage lines, send an in-stream ERROR, close at
  once;
- HTTP writes go through the same RV-stamping path, and answer as an API server would, because
  the kmock emulator ignores exactly what makes a mutation safe (RELIABILITY.md §5.1: it ignores
  preconditions, persists dry-run deletes, has no cascade, no RBAC). Items 6-11 of §5.2:

  - DELETE honours ``preconditions`` (uid/RV mismatch → 409) and ``propagationPolicy``:
    Background removes the object, then its dependents (by ownerReferences uid); Foreground marks
    it terminating with the ``foregroundDeletion`` finalizer, removes the dependents, then the
    object unless another finalizer holds it (M4); Orphan strips the dependents' ownerReferences;
    a Job deleted with no policy orphans its pods and gets the apiserver's ``Warning`` header;
  - PATCH (merge, strategic treated as merge, JSON patch with ``test``) honours a
    ``metadata.resourceVersion``/``uid`` precondition (409), immutable fields (``immutable``) and a
    few type checks (422); Deployment ``scale`` and ``status`` subresources; PUT with an RV check;
  - ``dryRun=All`` validates and answers with the would-be object, persisting nothing and emitting
    no event; any other dryRun value is a 400;
  - ``pods/{n}/eviction`` (a 429 with a DisruptionBudget cause when :meth:`block_eviction` says a
    PDB blocks it) and ``pods/{n}/binding`` (uid/RV preconditions, 409 when already bound);
  - a tiny job controller: ``spec.suspend: true`` deletes the Job's pods and sets ``Suspended``;
  - the backends' kinds (``BACKENDS``: JobSet, Kubeflow jobs, Volcano Job and bus Command,
    LeaderWorkerSet) with the same write semantics; ``metadata.generateName``; a tiny Volcano
    controller (a Command moves its vcjob's ``status.state.phase`` and is consumed) and, when
    ``kueue_evict_after`` is set, Kueue's eviction of a deactivated admitted Workload;
  - Kueue's ClusterQueue (cluster-scoped) and LocalQueue (``KUEUE_QUEUES``, v1beta2 and v1beta1)
    with the same write semantics; a ``spec.stopPolicy`` outside None/Hold/HoldAndDrain is a 422;
  - SelfSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview answered from
    :class:`Rbac`, which is also enforced (403) on every request; ``Rbac.refused`` rules are
    allowed by the reviews yet refused at request time (a webhook authorizer, a policy change);
  - write faults (:meth:`fail_write`): a status before the change, or the change made and then
    the answer lost (a status, a reset connection, a stall): the "outcome unknown" cases (M5);
  - an ``Audit-Id`` header on every answer that is not a stream (recorded in ``audit``);
  - ``coordination.k8s.io/v1`` Leases (create, get, update with the resourceVersion precondition:
    what leader election's compare-and-swap relies on) and ``events.k8s.io/v1`` Events (create).

Added for the watch contract's remaining cases:

- streaming lists (KEP-3157, W17): with ``watch_list=True`` a watch carrying
  ``sendInitialEvents=true`` (and ``resourceVersionMatch=NotOlderThan``, else 400) sends the
  current objects as ADDED, then a BOOKMARK annotated ``k8s.io/initial-events-end: "true"``, then
  live events; ``watch_list_end=False`` leaves the bookmark out (a server that half supports it).
  With ``watch_list=False`` (the default, so older tests see no difference) such a request gets
  422, as an apiserver with the WatchList feature gate off answers;
- expiring tokens (C2): ``token_expiry`` maps a bearer token to its expiry on ``token_clock``;
  a request carrying an expired one gets 401, and an open watch is cut at its token's expiry (an
  auth proxy's behaviour; ``expired_cuts`` counts those), so a client that reopens its watches
  before the expiry never sees either.

Kueue's visibility API (SCHEDULERS.md §5.5), when ``kueue_visibility`` names a version: the
``visibility.kueue.x-k8s.io`` group document, and ``pendingworkloads`` of a ClusterQueue or a
LocalQueue computed from the stored Workloads as Kueue orders them (pending = no
``QuotaReserved=True``, no ``status.admission`` and ``spec.active`` not false; by priority, then
creation time), with ``limit``/``offset`` and RBAC (``get clusterqueues/pendingworkloads``);
``visibility_requests`` counts what it answered.

Not done (yet): field selectors, an ``Audit-Id`` on watch
streams (kmock prepares them out of reach), pod graceful termination, and a selector change turning
a MODIFIED into a DELETED for a watcher.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import copy
import datetime
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiohttp.web
import attrs
import kmock
import orjson
from kmock._internal import enums, rendering
from typing_extensions import override

Obj = dict[str, Any]
Key = tuple[str | None, str]  # (namespace, name)


@dataclass(frozen=True)
class Res:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def kmock(self) -> kmock.resource:
        return kmock.resource(self.group, self.version, self.plural)


PODS = Res("Pod", "", "v1", "pods", True)
NODES = Res("Node", "", "v1", "nodes", False)
JOBS = Res("Job", "batch", "v1", "jobs", True)
DEPLOYMENTS = Res("Deployment", "apps", "v1", "deployments", True)
PRIORITY_CLASSES = Res("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False)
WORKLOADS = Res("Workload", "kueue.x-k8s.io", "v1beta2", "workloads", True)
#: hpctop schedule's leader election and decision Events: stored like any object, so a Lease
#: create is a 409 when it exists and a PUT carrying a stale resourceVersion is a 409 too
LEASES = Res("Lease", "coordination.k8s.io", "v1", "leases", True)
EVENTS = Res("Event", "events.k8s.io", "v1", "events", True)
#: the backends' owner kinds hpctop acts on (SCHEDULERS.md §9.2), with the same write semantics as
#: batch Jobs (preconditions, dryRun, propagation, immutable fields, type checks)
JOBSETS = Res("JobSet", "jobset.x-k8s.io", "v1alpha2", "jobsets", True)
PYTORCHJOBS = Res("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", True)
TFJOBS = Res("TFJob", "kubeflow.org", "v1", "tfjobs", True)
#: mpi-operator's MPIJob (v2beta1) and training-operator's (v1): the same kind in two versions
MPIJOBS = Res("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", True)
MPIJOBS_V1 = Res("MPIJob", "kubeflow.org", "v1", "mpijobs", True)
KUBEFLOW: tuple[Res, ...] = (PYTORCHJOBS, TFJOBS, MPIJOBS, MPIJOBS_V1)
VCJOBS = Res("Job", "batch.volcano.sh", "v1alpha1", "jobs", True)
#: Volcano bus Commands: what vcctl creates to abort/resume/restart a vcjob (SCHEDULERS.md §6.4)
COMMANDS = Res("Command", "bus.volcano.sh", "v1alpha1", "commands", True)
LWS = Res("LeaderWorkerSet", "leaderworkerset.x-k8s.io", "v1", "leaderworkersets", True)
#: scheduler-plugins coscheduling's gang (SCHEDULERS.md §7.1)
COSCHED_PODGROUPS = Res("PodGroup", "scheduling.x-k8s.io", "v1alpha1", "podgroups", True)
BACKENDS: tuple[Res, ...] = (JOBSETS, *KUBEFLOW, VCJOBS, COMMANDS, LWS, COSCHED_PODGROUPS)
#: Kueue's queues (SCHEDULERS.md §9.2 close/open queue): a ClusterQueue is cluster-scoped, a
#: LocalQueue namespaced; each at v1beta2 and at v1beta1 (older Kueue), as separate stores
CLUSTER_QUEUES = Res("ClusterQueue", "kueue.x-k8s.io", "v1beta2", "clusterqueues", False)
LOCAL_QUEUES = Res("LocalQueue", "kueue.x-k8s.io", "v1beta2", "localqueues", True)
CLUSTER_QUEUES_V1BETA1 = Res("ClusterQueue", "kueue.x-k8s.io", "v1beta1", "clusterqueues", False)
LOCAL_QUEUES_V1BETA1 = Res("LocalQueue", "kueue.x-k8s.io", "v1beta1", "localqueues", True)
KUEUE_QUEUES: tuple[Res, ...] = (CLUSTER_QUEUES, LOCAL_QUEUES, CLUSTER_QUEUES_V1BETA1, LOCAL_QUEUES_V1BETA1)
#: the values Kueue's CRD schema allows for a queue's spec.stopPolicy (anything else: 422)
QUEUE_STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
#: Kueue's job webhook: these job labels may change only while the job is suspended (§5.2, §5.6)
KUEUE_GUARDED_LABELS = ("kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class")
#: ConfigMaps: YuniKorn's queues.yaml lives in one (``yunikorn-configs``), which hpctop patches
CONFIGMAPS = Res("ConfigMap", "", "v1", "configmaps", True)
#: read-only kinds of the live-truth corpus (tests/backends/test_live_truth.py): served for lists only
WORKLOADS_V1BETA1 = Res("Workload", "kueue.x-k8s.io", "v1beta1", "workloads", True)
RESOURCE_FLAVORS = Res("ResourceFlavor", "kueue.x-k8s.io", "v1beta2", "resourceflavors", False)
VOLCANO_PODGROUPS = Res("PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups", True)
VOLCANO_QUEUES = Res("Queue", "scheduling.volcano.sh", "v1beta1", "queues", False)
TRAINJOBS = Res("TrainJob", "trainer.kubeflow.org", "v1alpha1", "trainjobs", True)
DAEMONSETS = Res("DaemonSet", "apps", "v1", "daemonsets", True)
#: the 2026 gang and topology kinds (issue 13): the native gang API's PodGroup (kubernetes/api
#: scheduling/v1beta1, beside PriorityClass v1 in the same group), Kueue's TAS Topology, Volcano's
#: HyperNodes; read-only, served at their own versions in discovery
NATIVE_PODGROUPS = Res("PodGroup", "scheduling.k8s.io", "v1beta1", "podgroups", True)
KUEUE_TOPOLOGIES = Res("Topology", "kueue.x-k8s.io", "v1beta2", "topologies", False)
VOLCANO_HYPERNODES = Res("HyperNode", "topology.volcano.sh", "v1alpha1", "hypernodes", False)
GANGS_2026: tuple[Res, ...] = (NATIVE_PODGROUPS, KUEUE_TOPOLOGIES, VOLCANO_HYPERNODES)
#: NVIDIA KAI-Scheduler's CRDs (deployments/kai-scheduler/crds: Queue served at v2 only, PodGroup at
#: v2alpha2 only), read-only here: hpctop reads them, and acts on the jobs' owners
KAI_QUEUES = Res("Queue", "scheduling.run.ai", "v2", "queues", False)
KAI_PODGROUPS = Res("PodGroup", "scheduling.run.ai", "v2alpha2", "podgroups", True)
READ_ONLY: tuple[Res, ...] = (
    WORKLOADS_V1BETA1, RESOURCE_FLAVORS, VOLCANO_PODGROUPS, VOLCANO_QUEUES, TRAINJOBS, DAEMONSETS,
    KAI_QUEUES, KAI_PODGROUPS, *GANGS_2026,
)  # fmt: skip
ALL: tuple[Res, ...] = (
    PODS, NODES, JOBS, DEPLOYMENTS, PRIORITY_CLASSES, WORKLOADS, LEASES, EVENTS, *BACKENDS, *KUEUE_QUEUES,
    CONFIGMAPS, *READ_ONLY,
)  # fmt: skip
#: DRA (``resource.k8s.io/v1``, hpctop.backends.dra) and NVIDIA's ComputeDomain CRD: read-only,
#: and served only where a test asks for them (``served=(*ALL, *DRA)``), so the discovery every
#: other test sees stays as it was
RESOURCE_SLICES = Res("ResourceSlice", "resource.k8s.io", "v1", "resourceslices", False)
RESOURCE_CLAIMS = Res("ResourceClaim", "resource.k8s.io", "v1", "resourceclaims", True)
RESOURCE_CLAIM_TEMPLATES = Res(
    "ResourceClaimTemplate", "resource.k8s.io", "v1", "resourceclaimtemplates", True
)
DEVICE_CLASSES = Res("DeviceClass", "resource.k8s.io", "v1", "deviceclasses", False)
DEVICE_TAINT_RULES = Res("DeviceTaintRule", "resource.k8s.io", "v1", "devicetaintrules", False)
COMPUTE_DOMAINS = Res("ComputeDomain", "resource.nvidia.com", "v1beta1", "computedomains", True)
DRA: tuple[Res, ...] = (
    RESOURCE_SLICES, RESOURCE_CLAIMS, RESOURCE_CLAIM_TEMPLATES,
    DEVICE_CLASSES, DEVICE_TAINT_RULES, COMPUTE_DOMAINS,
)  # fmt: skip
#: the same kinds at ``v1beta2`` only (Kubernetes 1.33, before DRA went GA): what discovery must pick
DRA_V1BETA2: tuple[Res, ...] = tuple(
    Res(r.kind, r.group, "v1beta2", r.plural, r.namespaced) for r in DRA if r.group == "resource.k8s.io"
)
#: what the tiny Volcano controller makes of a Command's action: the vcjob's next status.state.phase
VOLCANO_PHASES = {
    "AbortJob": "Aborted",
    "ResumeJob": "Running",
    "RestartJob": "Restarting",
    "TerminateJob": "Terminated",
    "CompleteJob": "Completed",
}

REVIEW_GROUPS = ("authorization.k8s.io", "authentication.k8s.io")
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
JOB_ORPHAN_WARNING = (
    '299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background '
    'to remove them or set propagationPolicy=Orphan to suppress this warning"'
)


@dataclass
class WatchFault:
    """What one watch request does after ``after`` events: drop, stall, garbage, error or close."""

    action: str  # "drop" | "stall" | "garbage" | "error" | "close"
    after: int = 0
    lines: tuple[bytes, ...] = ()  # for "garbage": raw lines sent (then the stream goes on)
    status: Obj = field(default_factory=dict)  # for "error": the Status object


@dataclass(frozen=True)
class Rule:
    """One RBAC rule: ``"*"`` matches anything; a resource may name a subresource (``pods/binding``,
    ``pods/*``); ``namespaces`` ``("*",)`` is a cluster-wide grant."""

    verbs: tuple[str, ...] = ("*",)
    groups: tuple[str, ...] = ("*",)
    resources: tuple[str, ...] = ("*",)
    namespaces: tuple[str, ...] = ("*",)

    def matches(self, verb: str, group: str, resource: str, subresource: str, namespace: str | None) -> bool:
        if "*" not in self.verbs and verb not in self.verbs:
            return False
        if "*" not in self.groups and group not in self.groups:
            return False
        if "*" not in self.namespaces and (namespace or "") not in self.namespaces:
            return False
        full = f"{resource}/{subresource}" if subresource else resource
        for pattern in self.resources:
            if pattern in ("*", full):
                return True
            if subresource and pattern in (f"{resource}/*", f"*/{subresource}"):
                return True
        return False

    def in_namespace(self, namespace: str) -> bool:
        return "*" in self.namespaces or namespace in self.namespaces


@dataclass
class Rbac:
    """What the user may do: ``rules`` allow (everything, by default); ``refused`` rules pass the
    reviews but get a 403 when the request is made (a webhook authorizer, a policy change since
    the review: the server's 403 wins, RELIABILITY.md §2.3)."""

    rules: list[Rule] = field(default_factory=lambda: [Rule()])
    refused: list[Rule] = field(default_factory=list)
    incomplete: bool = False

    def reviewed(self, verb: str, group: str, resource: str, subresource: str, namespace: str | None) -> bool:
        return any(r.matches(verb, group, resource, subresource, namespace) for r in self.rules)

    def enforced(self, verb: str, group: str, resource: str, subresource: str, namespace: str | None) -> bool:
        return self.reviewed(verb, group, resource, subresource, namespace) and not any(
            r.matches(verb, group, resource, subresource, namespace) for r in self.refused
        )


@dataclass
class WriteFault:
    """What the next matching write does: answer ``code`` before any change (``applied=False``),
    or make the change and then lose the answer: send ``code``, reset the connection (``mode="reset"``)
    or never answer (``mode="stall"``)."""

    verb: str  # create | patch | update | delete
    res: Res | None
    code: int = 500
    name: str | None = None
    subresource: str | None = None
    applied: bool = False
    mode: str = "status"  # status | reset | stall
    retry_after: str | None = None
    reason: str = ""
    message: str = ""
    details: Obj | None = None

    def matches(self, verb: str, res: Res | None, name: str | None, subresource: str | None) -> bool:
        return (
            self.verb == verb
            and (self.res is None or self.res == res)
            and (self.name is None or self.name == name)
            and (self.subresource or None) == (subresource or None)
        )


@dataclass(frozen=True)
class AuditEntry:
    """One answered request, as the apiserver's audit log would hold it: the id sent back in
    ``Audit-Id``, the verb, the path, the dryRun flag and the status."""

    audit_id: str
    method: str
    path: str
    status: int
    dry_run: bool


class _Answer(Exception):
    """Raised inside a write to answer at once with a status, a body and headers."""

    def __init__(self, code: int, body: Obj, headers: dict[str, str] | None = None) -> None:
        super().__init__(code)
        self.code, self.body, self.headers = code, body, headers or {}


def _error(code: int, reason: str, message: str, **details: Any) -> _Answer:
    return _Answer(code, status(code, reason, message, **details))


def status(code: int, reason: str, message: str = "", **details: Any) -> Obj:
    out: Obj = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message or reason,
    }
    if details:
        out["details"] = details
    return out


def parse_selector(text: str) -> list[tuple[str, str, str | None]]:
    """``a=b,c!=d,e,!f`` → [(op, key, value)] with op in =, !=, exists, !exists."""
    out: list[tuple[str, str, str | None]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "!=" in part:
            k, v = part.split("!=", 1)
            out.append(("!=", k.strip(), v.strip()))
        elif "=" in part:
            k, v = part.replace("==", "=").split("=", 1)
            out.append(("=", k.strip(), v.strip()))
        elif part.startswith("!"):
            out.append(("!exists", part[1:].strip(), None))
        else:
            out.append(("exists", part, None))
    return out


def matches(obj: Obj, selector: list[tuple[str, str, str | None]]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for op, key, value in selector:
        if op == "=" and labels.get(key) != value:
            return False
        if op == "!=" and labels.get(key) == value:
            return False
        if op == "exists" and key not in labels:
            return False
        if op == "!exists" and key in labels:
            return False
    return True


@attrs.define(kw_only=True)
class FakeApiServer(kmock.KubernetesEmulator):
    """An in-memory API server with resourceVersions, history, bookmarks and fault scripts."""

    window: int = 10_000  # events kept; a watch or a continue token older than this gets 410
    gone_in_stream: bool = True  # 410 as an in-stream ERROR (real servers) or as the HTTP status
    bookmark_interval: float | None = 60.0

    rv: int = attrs.field(default=1, init=False)
    compacted: int = attrs.field(default=0, init=False)  # watches from an RV below this get 410
    state: dict[Res, dict[Key, Obj]] = attrs.field(factory=dict, init=False)
    history: collections.deque[tuple[int, Res, Obj]] = attrs.field(factory=collections.deque, init=False)
    watch_faults: dict[Res, list[WatchFault]] = attrs.field(factory=dict, init=False)
    open_watches: int = attrs.field(default=0, init=False)
    log: list[tuple[float, rendering.Request]] = attrs.field(factory=list, init=False)  # (loop time, req)
    _watchers: set[asyncio.Queue[tuple[int, Res, Obj]]] = attrs.field(factory=set, init=False)
    _streams: dict[int, Any] = attrs.field(factory=dict, init=False)  # raw requests of open watches
    _snapshots: dict[str, tuple[int, list[Obj]]] = attrs.field(factory=dict, init=False)
    _uids: int = attrs.field(default=0, init=False)

    #: permissions enforced on every request and answered by the SelfSubject reviews
    rbac: Rbac = attrs.field(factory=Rbac)
    user: str = "alice@example.com"
    #: fields a PATCH/PUT may not change (422), per resource, as paths of keys
    immutable: dict[Res, list[tuple[str, ...]]] = attrs.field(
        factory=lambda: {
            PODS: [("spec", "priority"), ("spec", "priorityClassName"), ("spec", "nodeName")],
            JOBS: [("spec", "selector"), ("spec", "template", "spec", "priorityClassName")],
            VCJOBS: [("spec", "queue")],
        }
    )
    #: the job controller's reaction to spec.suspend (pods deleted, Suspended condition)
    job_controller: bool = True
    #: (namespace, pod) → the PodDisruptionBudget that blocks evicting it now (429)
    eviction_blocked: dict[tuple[str, str], str] = attrs.field(factory=dict)
    #: every answered request that was not a stream, with the Audit-Id it carried
    audit: list[AuditEntry] = attrs.field(factory=list, init=False)
    #: (namespace, pod, container) -> its log lines, served by GET .../pods/NAME/log (follow too:
    #: lines appended later are streamed); a key in ``logs_ended`` ends a followed stream
    pod_logs: dict[tuple[str, str, str], list[str]] = attrs.field(factory=dict, init=False)
    logs_ended: set[tuple[str, str, str]] = attrs.field(factory=set, init=False)
    write_faults: list[WriteFault] = attrs.field(factory=list, init=False)
    _audit_seq: int = attrs.field(default=0, init=False)
    #: Volcano's job controller, tiny: a created Command flips its vcjob's status.state.phase
    #: (VOLCANO_PHASES; AbortJob also deletes the job's pods) and is then deleted, as Volcano does.
    #: A Command whose target uid is not the job's is dropped unhandled (the job was replaced).
    volcano_controller: bool = True
    #: the Commands the Volcano controller consumed, in order (they are gone from the store)
    volcano_handled: list[Obj] = attrs.field(factory=list, init=False)
    #: Kueue's reaction to ``spec.active: false`` on an admitted Workload: after this many seconds
    #: of loop time it is evicted (``Evicted=True``, reason ``Deactivated``; ``QuotaReserved`` and
    #: ``Admitted`` False); ``spec.active: true`` sets ``Requeued=True`` (``Reactivated``). None
    #: (the default) leaves Workloads alone, so a requeue waiting for the eviction times out.
    kueue_evict_after: float | None = None
    _generated: int = attrs.field(default=0, init=False)
    #: serve streaming lists (sendInitialEvents); False answers them 422 (feature gate off)
    watch_list: bool = False
    #: send the initial-events-end bookmark (False: a server that never ends the initial phase)
    watch_list_end: bool = True
    #: bearer token -> expiry on ``token_clock``; None means no token check at all
    token_expiry: Any = None  # Callable[[str], float | None] | None
    token_clock: Any = None  # Callable[[], float] | None
    #: (token_clock time, token) of each request refused for an expired token
    expired_rejections: list[tuple[float, str]] = attrs.field(factory=list, init=False)
    #: open watches cut because their token expired
    expired_cuts: int = attrs.field(default=0, init=False)
    #: the version of Kueue's visibility API served (``v1beta2``, ...); None: not served (404)
    kueue_visibility: str | None = None
    #: paths of the visibility API requests answered
    visibility_requests: list[str] = attrs.field(factory=list, init=False)
    #: YuniKorn's ``POST .../proxy/ws/v1/validate-conf`` through the service proxy (False: 404,
    #: as when YuniKorn is not installed); its check is :func:`yunikorn_verdict`
    yunikorn_validate: bool = True
    #: the configs YuniKorn was asked to validate, parsed, in order
    yunikorn_validated: list[Any] = attrs.field(factory=list, init=False)
    #: what this server serves, and so what its discovery documents list (``/apis``,
    #: ``/apis/<group>/<version>``, ``/api/v1``): None serves every resource of ``ALL``; a tuple
    #: serves only those, and anything else is a 404 (a cluster without that CRD or version)
    served: tuple[Res, ...] | None = None
    #: the next this-many list requests of a resource never get an answer (a stalled API server)
    list_stalls: dict[Res, int] = attrs.field(factory=dict, init=False)
    #: list requests that arrived and were left unanswered by :attr:`list_stalls`
    stalled_lists: int = attrs.field(default=0, init=False)
    #: a ``continue`` page of this resource is answered only once its event is set (a big list
    #: caught between two pages: what the store and the console show meanwhile)
    continue_gates: dict[Res, asyncio.Event] = attrs.field(factory=dict, init=False)

    # -- writes (programmatic; HTTP writes come here too) ---------------------------------------

    def _by_plural(self, resource: kmock.resource | None) -> Res | None:
        if resource is None:
            return None
        for res in self.served_resources:
            if (res.group, res.version, res.plural) == (resource.group, resource.version, resource.plural):
                return res
        return None

    @property
    def served_resources(self) -> tuple[Res, ...]:
        return self.served if self.served is not None else ALL

    # -- discovery (what an API server lists about itself) ----------------------------------------

    def _group_versions(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for res in self.served_resources:
            if res.group and res.version not in groups.setdefault(res.group, []):
                groups[res.group].append(res.version)
        return groups

    @staticmethod
    def _group_entry(group: str, versions: list[str]) -> Obj:
        listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": listed, "preferredVersion": listed[0]}

    @override
    async def _serve_apis(self, request: rendering.Request) -> rendering.Payload:
        groups = [self._group_entry(g, vs) for g, vs in self._group_versions().items()]
        if self.kueue_visibility is not None:
            groups.append(self._group_entry(VISIBILITY_GROUP, [self.kueue_visibility]))
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    @override
    async def _serve_group(self, request: rendering.Request) -> rendering.Payload:
        group = request.resource.group if request.resource is not None else ""
        versions = self._group_versions().get(group or "")
        if not versions:
            raise kmock.KubernetesResourceNotFoundError()
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group_entry(group or "", versions)}

    @override
    async def _serve_version(self, request: rendering.Request) -> rendering.Payload:
        wanted = request.resource
        group, version = (wanted.group or "", wanted.version or "") if wanted is not None else ("", "")
        listed = [r for r in self.served_resources if (r.group, r.version) == (group, version)]
        if not listed and group:
            raise kmock.KubernetesResourceNotFoundError()
        verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
        resources: list[Obj] = []
        for res in listed:
            resources.append(
                {"name": res.plural, "kind": res.kind, "namespaced": res.namespaced, "verbs": verbs}
            )
            resources.append(
                {
                    "name": f"{res.plural}/status",
                    "kind": res.kind,
                    "namespaced": res.namespaced,
                    "verbs": ["get", "patch", "update"],
                }
            )
        group_version = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version,
            "resources": resources,
        }

    def _emit(self, res: Res, etype: str, obj: Obj) -> None:
        event = {"type": etype, "object": copy.deepcopy(obj)}
        self.history.append((self.rv, res, event))
        while len(self.history) > self.window:
            self.compacted = self.history.popleft()[0]
        for queue in list(self._watchers):
            queue.put_nowait((self.rv, res, event))

    def upsert(self, res: Res, obj: Obj) -> Obj:
        """Create or replace an object (ADDED or MODIFIED); returns the stored copy with its RV."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        key: Key = (meta.get("namespace") if res.namespaced else None, meta["name"])
        if not res.namespaced:
            meta.pop("namespace", None)
        objects = self.state.setdefault(res, {})
        old = objects.get(key)
        if old is None:
            self._uids += 1
            meta.setdefault("uid", f"uid-{self._uids}")
        else:
            meta["uid"] = old["metadata"].get("uid")
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        obj["kind"] = res.kind
        obj["apiVersion"] = res.api_version
        objects[key] = obj
        self._emit(res, "ADDED" if old is None else "MODIFIED", obj)
        return copy.deepcopy(obj)

    def remove(self, res: Res, name: str, namespace: str | None = None) -> Obj | None:
        """Delete an object (DELETED with a new RV); None when it did not exist."""
        key: Key = (namespace if res.namespaced else None, name)
        old = self.state.get(res, {}).pop(key, None)
        if old is None:
            return None
        self.rv += 1
        old["metadata"]["resourceVersion"] = str(self.rv)
        self._emit(res, "DELETED", old)
        return old

    def compact(self) -> None:
        """Forget all history: any watch from an RV before now gets 410 (etcd compaction)."""
        self.history.clear()
        self.compacted = self.rv
        self._snapshots.clear()

    def disconnect(self) -> int:
        """Cut every open watch now (a network blip); returns how many were cut."""
        cut = 0
        for raw in list(self._streams.values()):
            if raw is not None and raw.transport is not None:
                raw.transport.close()
                cut += 1
        return cut

    def items_of(self, res: Res) -> dict[Key, Obj]:
        return dict(self.state.get(res, {}))

    def versions(self, res: Res) -> dict[Key, str]:
        """{(namespace, name): resourceVersion} of what the server holds now."""
        return {k: o["metadata"]["resourceVersion"] for k, o in self.state.get(res, {}).items()}

    def calls(self, res: Res, action: enums.action) -> list[tuple[float, dict[str, str]]]:
        """(loop time, query parameters) of each request of ``action`` on ``res``, in order."""
        return [
            (t, dict(r.params))
            for t, r in self.log
            if r.action == action and self._by_plural(r.resource) == res
        ]

    # -- faults ---------------------------------------------------------------------------------

    def script_watch(self, res: Res, *faults: WatchFault) -> None:
        """The next watch requests of ``res`` misbehave as given, one fault per request, in order."""
        self.watch_faults.setdefault(res, []).extend(faults)

    def fail(
        self,
        res: Res,
        action: enums.action,
        code: int,
        *,
        times: int = 1,
        retry_after: str | None = None,
        reason: str = "",
        details: Obj | None = None,
    ) -> None:
        """The next ``times`` requests of ``action`` on ``res`` get an HTTP ``code`` with a Status.

        For writes (CREATE, UPDATE, DELETE) the answer comes before any change is made; see
        :meth:`fail_write` for the other cases.
        """
        verb = {enums.action.CREATE: "create", enums.action.UPDATE: "patch", enums.action.DELETE: "delete"}
        if action in verb:
            self.fail_write(
                res, verb[action], code, times=times, retry_after=retry_after, reason=reason, details=details
            )
            return
        body = status(code, reason or {403: "Forbidden", 429: "TooManyRequests"}.get(code, "Error"))
        if details:
            body["details"] = details
        view = self[action, res.kmock]
        seen = len(list(view))  # kmock slices count every matching request, also earlier ones
        reaction = view[seen : seen + times] << code
        if retry_after is not None:
            reaction = reaction << {"Retry-After": retry_after}
        reaction << orjson.dumps(body)

    def fail_write(
        self,
        res: Res | None,
        verb: str,
        code: int = 500,
        *,
        name: str | None = None,
        subresource: str | None = None,
        times: int = 1,
        applied: bool = False,
        mode: str = "status",
        retry_after: str | None = None,
        reason: str = "",
        message: str = "",
        details: Obj | None = None,
    ) -> None:
        """The next ``times`` writes of ``verb`` (create, patch, update, delete) on ``res`` fail.

        ``applied=False``: answered with ``code`` before any change. ``applied=True``: the change is
        made, then the answer is ``code`` (``mode="status"``), a reset connection (``"reset"``) or
        nothing at all (``"stall"``): the outcome the client cannot know (RELIABILITY.md §2.2, M5).
        """
        for _ in range(times):
            self.write_faults.append(
                WriteFault(
                    verb,
                    res,
                    code,
                    name=name,
                    subresource=subresource,
                    applied=applied,
                    mode=mode,
                    retry_after=retry_after,
                    reason=reason,
                    message=message,
                    details=details,
                )
            )

    def block_eviction(self, namespace: str, name: str, budget: str = "pdb") -> None:
        """Evicting this pod violates a PodDisruptionBudget now: the Eviction gets a 429."""
        self.eviction_blocked[(namespace, name)] = budget

    def writes(self) -> list[rendering.Request]:
        """The mutating requests received (POST/PUT/PATCH/DELETE), reviews excluded, in order."""
        return [r for _, r in self.log if _is_write(r) and not _is_review(r)]

    # not kmock's HTTP ``get(url)`` helper, which the tests never use on the fake: its object lookup
    def get(self, res: Res, name: str, namespace: str | None = None) -> Obj | None:  # type: ignore[override]
        """A copy of what the server holds for this object, or None."""
        obj = self.state.get(res, {}).get((namespace if res.namespaced else None, name))
        return copy.deepcopy(obj) if obj is not None else None

    # -- the default answers --------------------------------------------------------------------

    @override
    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        self._audit_seq += 1
        audit_id = f"00000000-0000-4000-8000-{self._audit_seq:012d}"
        response = await super().__call__(raw_request)
        if not response.prepared:
            response.headers["Audit-Id"] = audit_id
            self.audit.append(
                AuditEntry(
                    audit_id,
                    raw_request.method,
                    raw_request.path,
                    response.status,
                    raw_request.query.get("dryRun") == "All",
                )
            )
        return response

    def _token_deadline(self, request: rendering.Request) -> float | None:
        """The expiry of the request's bearer token (``token_clock`` time), None when unchecked."""
        if self.token_expiry is None:
            return None
        auth = str(request.headers.get("Authorization", ""))
        token = auth.removeprefix("Bearer ")
        expiry = self.token_expiry(token)
        return float(expiry) if expiry is not None else None

    @override
    async def _handle(self, request: rendering.Request) -> Any:
        self.log.append((asyncio.get_running_loop().time(), request))
        deadline = self._token_deadline(request)
        if deadline is not None and self.token_clock is not None and self.token_clock() >= deadline:
            auth = str(request.headers.get("Authorization", ""))
            self.expired_rejections.append((self.token_clock(), auth.removeprefix("Bearer ")))
            return aiohttp.web.Response(
                body=orjson.dumps(status(401, "Unauthorized", "token expired")),
                status=401,
                content_type="application/json",
            )
        if request.url.path.startswith(f"/apis/{VISIBILITY_GROUP}"):
            return self._visibility(request)
        if request.url.path.endswith(YUNIKORN_VALIDATE) and "/services/" in request.url.path:
            return self._yunikorn_validate(request)
        log_target = _pod_log_target(request.url.path)
        if log_target is not None and _method(request) == "GET":
            return await self._pod_log(request, *log_target)
        if request.resource is not None and request.resource.plural:
            if _is_review(request):
                return self._review(request)
            self._authorize(request)
        if _is_write(request):
            try:
                code, body, headers = await self._write(request)
            except _Answer as answer:
                code, body, headers = answer.code, answer.body, answer.headers
            return aiohttp.web.Response(
                body=orjson.dumps(body), status=code, headers=headers, content_type="application/json"
            )
        # Skip the emulator's own object tracking: this class keeps the state.
        return await kmock.KubernetesScaffold._handle(self, request)

    # -- the pod log API (GET /api/v1/namespaces/NS/pods/NAME/log) -------------------------------

    async def _pod_log(self, request: rendering.Request, namespace: str, name: str) -> Any:
        """As the API server answers: 404 for an unknown pod, 400 for a container the pod does not
        have (the real message), the lines as text/plain, kept open with ``follow=true``."""

        def answer(code: int, body: Obj) -> aiohttp.web.Response:
            return aiohttp.web.Response(body=orjson.dumps(body), status=code, content_type="application/json")

        pod = self.get(PODS, name, namespace)
        if pod is None:
            return answer(404, status(404, "NotFound", f'pods "{name}" not found'))
        spec = pod.get("spec") or {}
        names = [c.get("name") for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])]
        container = request.params.get("container") or (names[0] if len(names) == 1 else "")
        if not container:
            message = f"a container name must be specified for pod {name}, choose one of: {names}"
            return answer(400, status(400, "BadRequest", message))
        if container not in names:
            message = f"container {container} is not valid for pod {name}"
            return answer(400, status(400, "BadRequest", message))
        key = (namespace, name, container)
        follow = request.params.get("follow") == "true"
        tail = request.params.get("tailLines")

        response = aiohttp.web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
        assert request._raw_request is not None  # kmock keeps it on every request it serves
        await response.prepare(request._raw_request)
        lines = self.pod_logs.get(key, [])
        sent = max(len(lines) - int(tail), 0) if tail else 0
        while True:
            lines = self.pod_logs.get(key, [])
            for line in lines[sent:]:
                await response.write(line.encode() + b"\n")
            sent = len(lines)
            if not follow or key in self.logs_ended:
                break
            await asyncio.sleep(0.05)
        await response.write_eof()
        return response

    # -- YuniKorn's validate-conf (through the API server's service proxy) ------------------------

    def _yunikorn_validate(self, request: rendering.Request) -> aiohttp.web.Response:
        if not self.yunikorn_validate or _method(request) != "POST":
            return aiohttp.web.Response(
                body=orjson.dumps(
                    status(404, "NotFound", "the server could not find the requested resource")
                ),
                status=404,
                content_type="application/json",
            )
        try:
            config = orjson.loads(request.body) if request.body else None
        except orjson.JSONDecodeError:
            config = None
        self.yunikorn_validated.append(config)
        allowed, reason = yunikorn_verdict(config)
        return aiohttp.web.Response(
            body=orjson.dumps({"allowed": allowed, "reason": reason}),
            status=200,
            content_type="application/json",
        )

    # -- Kueue's visibility API -----------------------------------------------------------------

    def _visibility(self, request: rendering.Request) -> aiohttp.web.Response:
        def answer(code: int, body: Obj) -> aiohttp.web.Response:
            return aiohttp.web.Response(body=orjson.dumps(body), status=code, content_type="application/json")

        path = request.url.path.rstrip("/")
        parts = path.split("/")[2:]  # [group, version, ...]
        version = self.kueue_visibility
        if version is None or (len(parts) > 1 and parts[1] != version):
            return answer(404, status(404, "NotFound", "the server could not find the requested resource"))
        self.visibility_requests.append(path)
        if len(parts) == 1:
            gv = {"groupVersion": f"{VISIBILITY_GROUP}/{version}", "version": version}
            return answer(
                200,
                {"kind": "APIGroup", "apiVersion": "v1", "name": VISIBILITY_GROUP, "versions": [gv],
                 "preferredVersion": gv},
            )  # fmt: skip
        rest = parts[2:]
        namespaced = rest[:1] == ["namespaces"] and len(rest) > 2
        queue_kind = rest[2] if namespaced else (rest[0] if rest else "")
        namespace = rest[1] if namespaced else None
        if not self.rbac.enforced("get", VISIBILITY_GROUP, queue_kind, "pendingworkloads", namespace):
            return answer(
                403,
                status(403, "Forbidden", f'{queue_kind}.{VISIBILITY_GROUP} "pendingworkloads" is forbidden'),
            )
        if len(rest) == 3 and rest[0] == "clusterqueues" and rest[2] == "pendingworkloads":
            rows = [r for r in self._pending_workloads() if r[0] == rest[1]]
        elif (
            len(rest) == 5
            and rest[0] == "namespaces"
            and rest[2] == "localqueues"
            and rest[4] == "pendingworkloads"
        ):
            rows = [r for r in self._pending_workloads() if (r[1], r[2]) == (rest[1], rest[3])]
        else:
            return answer(404, status(404, "NotFound", "the server could not find the requested resource"))
        offset = int(request.params.get("offset") or 0)
        limit = int(request.params.get("limit") or 1000)
        items = [item for _, _, _, item in rows[offset : offset + limit]]
        return answer(
            200,
            {"kind": "PendingWorkloadsSummary", "apiVersion": f"{VISIBILITY_GROUP}/{version}",
             "metadata": {}, "items": items},
        )  # fmt: skip

    def _pending_workloads(self) -> list[tuple[str, str, str, Obj]]:
        """(cluster queue, namespace, local queue, item) of every pending Workload, in Kueue's order."""
        local = {
            (o["metadata"].get("namespace"), o["metadata"]["name"]): str(
                _dig(o, ("spec", "clusterQueue")) or ""
            )
            for o in self.state.get(LOCAL_QUEUES, {}).values()
        }

        def pending(w: Obj) -> bool:
            conditions = _dig(w, ("status", "conditions")) or []
            reserved = any(c.get("type") == "QuotaReserved" and c.get("status") == "True" for c in conditions)
            return (
                not reserved
                and not _dig(w, ("status", "admission"))
                and _dig(w, ("spec", "active")) is not False
            )

        waiting = sorted(
            (
                w
                for res in (WORKLOADS, WORKLOADS_V1BETA1)
                for w in self.state.get(res, {}).values()
                if pending(w)
            ),
            key=lambda w: (
                -int(_dig(w, ("spec", "priority")) or 0),
                str(w["metadata"].get("creationTimestamp") or ""),
                w["metadata"]["name"],
            ),
        )
        rows: list[tuple[str, str, str, Obj]] = []
        in_cq: dict[str, int] = {}
        in_lq: dict[tuple[str, str], int] = {}
        for w in waiting:
            meta = w["metadata"]
            namespace, queue = str(meta.get("namespace") or ""), str(_dig(w, ("spec", "queueName")) or "")
            cq = local.get((namespace, queue))
            if not cq:
                continue  # a Workload of no known LocalQueue is inadmissible, and listed nowhere
            item = {
                "metadata": {
                    "name": meta["name"],
                    "namespace": namespace,
                    "creationTimestamp": meta.get("creationTimestamp"),
                    "ownerReferences": copy.deepcopy(meta.get("ownerReferences") or []),
                },
                "priority": int(_dig(w, ("spec", "priority")) or 0),
                "localQueueName": queue,
                "positionInClusterQueue": in_cq.get(cq, 0),
                "positionInLocalQueue": in_lq.get((namespace, queue), 0),
            }
            in_cq[cq] = in_cq.get(cq, 0) + 1
            in_lq[(namespace, queue)] = in_lq.get((namespace, queue), 0) + 1
            rows.append((cq, namespace, queue, item))
        return rows

    # -- RBAC and the SelfSubject reviews -------------------------------------------------------

    def _authorize(self, request: rendering.Request) -> None:
        assert request.resource is not None
        verb = _verb(request)
        group = request.resource.group or ""
        plural = request.resource.plural or ""
        sub = request.subresource or ""
        if self.rbac.enforced(verb, group, plural, sub, request.namespace):
            return
        what = f"{plural}.{group}" if group else plural
        where = f' in the namespace "{request.namespace}"' if request.namespace else " at the cluster scope"
        on = f'"{plural}/{sub}"' if sub else f'"{plural}"'
        target = f'{what} "{request.name}"' if request.name else what
        raise kmock.KubernetesError(
            status=403,
            reason="Forbidden",
            message=f'{target} is forbidden: User "{self.user}" cannot {verb} resource {on} '
            f'in API group "{group}"{where}',
            details={"name": request.name or "", "group": group, "kind": plural},
        )

    def _review(self, request: rendering.Request) -> aiohttp.web.Response:
        assert request.resource is not None
        try:
            review = orjson.loads(request.body) if request.body else {}
        except orjson.JSONDecodeError:
            review = {}
        if not isinstance(review, dict):
            review = {}
        spec = review.get("spec") if isinstance(review.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        plural = request.resource.plural
        if plural == "selfsubjectaccessreviews":
            attrs_ = spec.get("resourceAttributes") or {}
            allowed = self.rbac.reviewed(
                str(attrs_.get("verb", "")),
                str(attrs_.get("group", "")),
                str(attrs_.get("resource", "")),
                str(attrs_.get("subresource", "")),
                attrs_.get("namespace") or None,
            )
            out: Obj = {"allowed": allowed}
            if allowed:
                out["reason"] = 'RBAC: allowed by RoleBinding "hpctop-test"'
        elif plural == "selfsubjectrulesreviews":
            namespace = str(spec.get("namespace", ""))
            out = {
                "resourceRules": [
                    {"verbs": list(r.verbs), "apiGroups": list(r.groups), "resources": list(r.resources)}
                    for r in self.rbac.rules
                    if r.in_namespace(namespace)
                ],
                "nonResourceRules": [],
                "incomplete": self.rbac.incomplete,
            }
        elif plural == "selfsubjectreviews":
            out = {"userInfo": {"username": self.user, "groups": ["system:authenticated"]}}
        else:
            raise kmock.KubernetesResourceNotFoundError()
        kind = {
            "selfsubjectaccessreviews": "SelfSubjectAccessReview",
            "selfsubjectrulesreviews": "SelfSubjectRulesReview",
            "selfsubjectreviews": "SelfSubjectReview",
        }[plural]
        body = {
            "kind": kind,
            "apiVersion": f"{request.resource.group}/{request.resource.version}",
            "metadata": {},
            "spec": spec,
            "status": out,
        }
        return aiohttp.web.Response(body=orjson.dumps(body), status=201, content_type="application/json")

    # -- writes ---------------------------------------------------------------------------------

    def _take_fault(self, verb: str, res: Res | None, request: rendering.Request) -> WriteFault | None:
        for i, fault in enumerate(self.write_faults):
            if fault.matches(verb, res, request.name, request.subresource):
                return self.write_faults.pop(i)
        return None

    async def _lose_answer(self, request: rendering.Request, fault: WriteFault) -> None:
        if fault.mode == "stall":
            await asyncio.sleep(10**6)
        if fault.mode == "reset":
            raw = request._raw_request
            assert raw is not None and raw.transport is not None
            raw.transport.abort()
            raise _error(500, "InternalError", "connection reset")  # never reaches the client

    async def _write(self, request: rendering.Request) -> tuple[int, Obj, dict[str, str]]:
        res = self._by_plural(request.resource)
        verb = _verb(request)
        dry = request.params.get("dryRun")
        if dry is not None and dry != "All":
            raise _error(
                400, "BadRequest", f'Invalid dry run value "{dry}": the only supported value is "All"'
            )
        if res is None:
            raise _error(404, "NotFound", "the server could not find the requested resource")
        fault = self._take_fault(verb, res, request)
        if fault is not None and not fault.applied:
            raise self._fault_answer(fault, request)
        try:
            body = orjson.loads(request.body) if request.body else None
        except orjson.JSONDecodeError:
            raise _error(400, "BadRequest", "the request body is not valid JSON") from None
        answer = self._mutate(res, request, verb, body, dry_run=dry is not None)
        if fault is not None:
            await self._lose_answer(request, fault)
            raise self._fault_answer(fault, request)
        return answer

    def _fault_answer(self, fault: WriteFault, request: rendering.Request) -> _Answer:
        reason = fault.reason or {403: "Forbidden", 429: "TooManyRequests", 503: "ServiceUnavailable"}.get(
            fault.code, "InternalError"
        )
        body = status(fault.code, reason, fault.message or reason)
        if fault.details:
            body["details"] = fault.details
        headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
        return _Answer(fault.code, body, headers)

    def _mutate(
        self, res: Res, request: rendering.Request, verb: str, body: Any, *, dry_run: bool
    ) -> tuple[int, Obj, dict[str, str]]:
        sub = request.subresource
        if verb == "create" and request.name is None:
            return self._create(res, request, body, dry_run)
        if verb == "create" and res == PODS and sub == "binding":
            return self._bind(request, body, dry_run)
        if verb == "create" and res == PODS and sub == "eviction":
            return self._evict(request, body, dry_run)
        if verb == "delete" and sub is None:
            return self._delete(res, request, body, dry_run)
        if verb == "patch":
            return self._patch(res, request, body, dry_run)
        if verb == "update" and sub is None:
            return self._update(res, request, body, dry_run)
        raise _error(405, "MethodNotAllowed", f"{request.method} is not supported on this path")

    def _current(self, res: Res, request: rendering.Request) -> Obj:
        name = request.name or ""
        obj = self.state.get(res, {}).get((request.namespace if res.namespaced else None, name))
        if obj is None:
            what = f"{res.plural}.{res.group}" if res.group else res.plural
            raise _error(
                404, "NotFound", f'{what} "{name}" not found', name=name, group=res.group, kind=res.plural
            )
        return obj

    @staticmethod
    def _preconditions(obj: Obj, uid: Any, rv: Any) -> None:
        meta = obj["metadata"]
        if uid and uid != meta.get("uid"):
            raise _error(
                409,
                "Conflict",
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid')}",
            )
        if rv and rv != meta.get("resourceVersion"):
            raise _error(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {obj.get("kind", "object")} "{meta.get("name")}": '
                "the object has been modified; please apply your changes to the latest version and try again",
            )

    def _validate(self, res: Res, old: Obj, new: Obj) -> None:
        causes: list[Obj] = []
        for path in self.immutable.get(res, []):
            before, after = _dig(old, path), _dig(new, path)
            if before != after and not (path == ("spec", "nodeName") and before is None):
                causes.append(
                    {
                        "reason": "FieldValueForbidden",
                        "field": ".".join(path),
                        "message": "field is immutable",
                    }
                )
        checks: list[tuple[tuple[str, ...], type, bool]] = [
            (("spec", "suspend"), bool, res == JOBS),
            (("spec", "active"), bool, res in (WORKLOADS, WORKLOADS_V1BETA1)),
            (("spec", "replicas"), int, res == DEPLOYMENTS),
            (("spec", "suspend"), bool, res == JOBSETS),
            (("spec", "runPolicy", "suspend"), bool, res in KUBEFLOW),
            (("spec", "replicas"), int, res == LWS),
            (("spec", "priorityClassName"), str, res == VCJOBS),
            (("spec", "priority"), int, res in (WORKLOADS, WORKLOADS_V1BETA1)),
        ]
        self._kueue_webhook(res, old, new)
        stop_policy = _dig(new, ("spec", "stopPolicy"))
        if res in KUEUE_QUEUES and stop_policy is not None and stop_policy not in QUEUE_STOP_POLICIES:
            supported = ", ".join(f'"{p}"' for p in QUEUE_STOP_POLICIES)
            causes.append(
                {
                    "reason": "FieldValueNotSupported",
                    "field": "spec.stopPolicy",
                    "message": f"Unsupported value: {stop_policy!r}: supported values: {supported}",
                }
            )
        if res == COMMANDS and not old:
            action = new.get("action")
            if action not in VOLCANO_PHASES:
                causes.append(
                    {"reason": "FieldValueNotSupported", "field": "action", "message": f"{action!r}"}
                )
            if not (new.get("target") or {}).get("name"):
                causes.append({"reason": "FieldValueRequired", "field": "target.name", "message": "Required"})
        for path, kind, applies in checks:
            value = _dig(new, path)
            if not applies or value is None:
                continue
            bad = not isinstance(value, kind) or (
                isinstance(value, int) and kind is int and (isinstance(value, bool) or value < 0)
            )
            if bad:
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": ".".join(path),
                        "message": f"Invalid value: {value!r}",
                    }
                )
        if causes:
            name = new.get("metadata", {}).get("name", "")
            what = f"{res.kind}.{res.group}" if res.group else res.kind
            text = ", ".join(f"{c['field']}: {c['message']}" for c in causes)
            raise _error(
                422,
                "Invalid",
                f'{what} "{name}" is invalid: {text}',
                name=name,
                group=res.group,
                kind=res.kind,
                causes=causes,
            )

    @staticmethod
    def _kueue_webhook(res: Res, old: Obj, new: Obj) -> None:
        """Kueue's validating webhook on a job: a queue-name/priority-class label change is denied
        unless the job is suspended (not admitted); a webhook denial is a 403 naming the webhook."""
        if res not in (JOBS, JOBSETS, *KUBEFLOW) or not old:
            return
        suspend = ("spec", "runPolicy", "suspend") if res in KUBEFLOW else ("spec", "suspend")
        before = _dig(old, ("metadata", "labels")) or {}
        after = _dig(new, ("metadata", "labels")) or {}
        changed = [k for k in KUEUE_GUARDED_LABELS if k in before and before.get(k) != after.get(k)]
        if changed and not _dig(old, suspend):
            raise _error(
                403,
                "Forbidden",
                f'admission webhook "vjob.kb.io" denied the request: metadata.labels[{changed[0]}]: '
                "Invalid value: field is immutable",
            )

    def _commit(self, res: Res, old: Obj, new: Obj) -> Obj:
        stored = self.upsert(res, new)
        if res == JOBS and self.job_controller:
            self._job_controller(old, stored)
        if res in (WORKLOADS, WORKLOADS_V1BETA1) and self.kueue_evict_after is not None:
            self._kueue_controller(old, stored, res)
        return self.get(res, stored["metadata"]["name"], stored["metadata"].get("namespace")) or stored

    def _job_controller(self, old: Obj, new: Obj) -> None:
        was, now = bool(_dig(old, ("spec", "suspend"))), bool(_dig(new, ("spec", "suspend")))
        if was == now:
            return
        if now:
            for dep_res, dep in self._dependents(new["metadata"]["uid"]):
                if dep_res == PODS:
                    self.remove(PODS, dep["metadata"]["name"], dep["metadata"].get("namespace"))
        status_ = copy.deepcopy(new.get("status") or {})
        conditions = [c for c in status_.get("conditions", []) if c.get("type") != "Suspended"]
        conditions.append(
            {
                "type": "Suspended",
                "status": "True" if now else "False",
                "reason": "JobSuspended" if now else "JobResumed",
            }
        )
        status_["conditions"] = conditions
        if now:
            status_["active"] = 0
            status_.pop("startTime", None)
        self.upsert(JOBS, new | {"status": status_})

    def _kueue_controller(self, old: Obj, new: Obj, res: Res = WORKLOADS) -> None:
        def active(obj: Obj) -> bool:
            return _dig(obj, ("spec", "active")) is not False

        if active(old) == active(new):
            return
        meta = new["metadata"]
        if not active(new):
            if any(
                c.get("type") in ("QuotaReserved", "Admitted") and c.get("status") == "True"
                for c in _dig(new, ("status", "conditions")) or []
            ):
                assert self.kueue_evict_after is not None
                asyncio.get_running_loop().call_later(
                    self.kueue_evict_after,
                    self._kueue_evict,
                    meta.get("namespace"),
                    meta["name"],
                    meta["uid"],
                    res,
                )
            return
        self._set_conditions(
            res, new, {"Requeued": ("True", "Reactivated"), "Evicted": ("False", "Reactivated")}
        )

    def _kueue_evict(self, namespace: str | None, name: str, uid: str, res: Res = WORKLOADS) -> None:
        obj = self.get(res, name, namespace)
        if obj is None or obj["metadata"].get("uid") != uid or _dig(obj, ("spec", "active")) is not False:
            return
        self._set_conditions(
            res,
            obj,
            {
                "Evicted": ("True", "Deactivated"),
                "QuotaReserved": ("False", "Pending"),
                "Admitted": ("False", "NoReservation"),
            },
        )

    def _set_conditions(self, res: Res, obj: Obj, conditions: dict[str, tuple[str, str]]) -> None:
        status_ = copy.deepcopy(obj.get("status") or {})
        kept = [c for c in status_.get("conditions", []) if c.get("type") not in conditions]
        status_["conditions"] = kept + [
            {"type": t, "status": s, "reason": r} for t, (s, r) in conditions.items()
        ]
        self.upsert(res, obj | {"status": status_})

    def _volcano_command(self, command: Obj) -> None:
        """Volcano's controller handling a bus Command: the target's phase moves, the Command goes."""
        meta = command["metadata"]
        target = command.get("target") or {}
        self.remove(COMMANDS, meta["name"], meta.get("namespace"))
        job = self.get(VCJOBS, str(target.get("name", "")), meta.get("namespace"))
        if job is None or job["metadata"].get("uid") != target.get("uid"):
            return
        self.volcano_handled.append(command)
        action = str(command.get("action"))
        if action in ("AbortJob", "RestartJob", "TerminateJob"):
            for dep_res, dep in self._dependents(job["metadata"]["uid"]):
                if dep_res == PODS:
                    self.remove(PODS, dep["metadata"]["name"], dep["metadata"].get("namespace"))
        status_ = copy.deepcopy(job.get("status") or {})
        state = dict(status_.get("state") or {})
        state.update(phase=VOLCANO_PHASES[action], reason=f"{action} by Command {meta['name']}")
        status_["state"] = state
        if action == "RestartJob":
            status_["retryCount"] = int(status_.get("retryCount") or 0) + 1
        self.upsert(VCJOBS, job | {"status": status_})

    def _dependents(self, uid: str) -> list[tuple[Res, Obj]]:
        out: list[tuple[Res, Obj]] = []
        for res, objects in self.state.items():
            for obj in objects.values():
                refs = obj.get("metadata", {}).get("ownerReferences") or []
                if any(ref.get("uid") == uid for ref in refs):
                    out.append((res, obj))
        return out

    def _cascade(self, uid: str) -> None:
        for res, dep in self._dependents(uid):
            meta = dep["metadata"]
            if self.remove(res, meta["name"], meta.get("namespace")) is not None:
                self._cascade(meta.get("uid", ""))

    def _create(
        self, res: Res, request: rendering.Request, body: Any, dry_run: bool
    ) -> tuple[int, Obj, dict[str, str]]:
        if not isinstance(body, dict):
            raise _error(400, "BadRequest", "the body is not an object")
        obj = copy.deepcopy(body)
        meta = obj.setdefault("metadata", {})
        if request.namespace and res.namespaced:
            meta.setdefault("namespace", request.namespace)
        name = meta.get("name", "")
        if not name and meta.get("generateName"):
            self._generated += 1
            name = meta["name"] = f"{meta['generateName']}{self._generated:05x}"
        if not name:
            raise _error(422, "Invalid", "metadata.name: Required value")
        if (meta.get("namespace") if res.namespaced else None, name) in self.state.get(res, {}):
            what = f"{res.plural}.{res.group}" if res.group else res.plural
            raise _error(409, "AlreadyExists", f'{what} "{name}" already exists', name=name, kind=res.plural)
        self._validate(res, {}, obj)
        if dry_run:
            return 201, obj | {"kind": res.kind, "apiVersion": res.api_version}, {}
        stored = self.upsert(res, obj)
        if res == COMMANDS and self.volcano_controller:
            self._volcano_command(stored)
        return 201, stored, {}

    def _bind(self, request: rendering.Request, body: Any, dry_run: bool) -> tuple[int, Obj, dict[str, str]]:
        pod_ = self._current(PODS, request)
        binding = body if isinstance(body, dict) else {}
        meta = binding.get("metadata") or {}
        target = (binding.get("target") or {}).get("name")
        if not target:
            raise _error(422, "Invalid", "target.name: Required value")
        self._preconditions(pod_, meta.get("uid"), meta.get("resourceVersion"))
        bound = (pod_.get("spec") or {}).get("nodeName")
        if bound:
            raise _error(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{request.name}": '
                f'pod {request.name} is already assigned to node "{bound}"',
            )
        if not dry_run:
            new = copy.deepcopy(pod_)
            new.setdefault("spec", {})["nodeName"] = target
            conditions = [
                c for c in (new.get("status") or {}).get("conditions", []) if c.get("type") != "PodScheduled"
            ]
            new.setdefault("status", {})["conditions"] = [
                *conditions,
                {"type": "PodScheduled", "status": "True"},
            ]
            self.upsert(PODS, new)
        return 201, status(201, "", "") | {"status": "Success"}, {}

    def _evict(self, request: rendering.Request, body: Any, dry_run: bool) -> tuple[int, Obj, dict[str, str]]:
        pod_ = self._current(PODS, request)
        eviction = body if isinstance(body, dict) else {}
        options = eviction.get("deleteOptions") or {}
        preconditions = options.get("preconditions") or {}
        self._preconditions(pod_, preconditions.get("uid"), preconditions.get("resourceVersion"))
        budget = self.eviction_blocked.get((request.namespace or "", request.name or ""))
        if budget is not None:
            raise _Answer(
                429,
                status(
                    429,
                    "TooManyRequests",
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    causes=[
                        {
                            "reason": "DisruptionBudget",
                            "message": f"The disruption budget {budget} needs 1 healthy pods "
                            "and has 1 currently",
                        }
                    ],
                ),
            )
        if not dry_run:
            self.remove(PODS, request.name or "", request.namespace)
        return 201, status(201, "", "") | {"status": "Success"}, {}

    def _delete(
        self, res: Res, request: rendering.Request, body: Any, dry_run: bool
    ) -> tuple[int, Obj, dict[str, str]]:
        obj = self._current(res, request)
        options = body if isinstance(body, dict) else {}
        policy = options.get("propagationPolicy") or request.params.get("propagationPolicy")
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise _error(422, "Invalid", f'propagationPolicy: Unsupported value: "{policy}"')
        preconditions = options.get("preconditions") or {}
        self._preconditions(obj, preconditions.get("uid"), preconditions.get("resourceVersion"))
        headers: dict[str, str] = {}
        if policy is None:
            if res == JOBS:
                headers["Warning"] = JOB_ORPHAN_WARNING
                policy = "Orphan"
            else:
                policy = "Background"
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            return 200, copy.deepcopy(obj), headers  # already terminating: nothing more to do
        finalizers = list(meta.get("finalizers") or [])
        now = datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if policy == "Foreground" or finalizers:
            new = copy.deepcopy(obj)
            new["metadata"]["deletionTimestamp"] = now
            if policy == "Foreground":
                new["metadata"]["finalizers"] = [*finalizers, "foregroundDeletion"]
            if dry_run:
                return 200, new, headers
            terminating = self.upsert(res, new)
            if policy != "Foreground":
                return 200, terminating, headers
            self._cascade(meta["uid"])
            if finalizers:  # another finalizer holds it: it stays terminating (M4)
                held = copy.deepcopy(terminating)
                held["metadata"]["finalizers"] = finalizers
                self.upsert(res, held)
            else:
                self.remove(res, meta["name"], meta.get("namespace"))
            return 200, terminating, headers
        if dry_run:
            return 200, copy.deepcopy(obj), headers
        gone = self.remove(res, meta["name"], meta.get("namespace"))
        assert gone is not None
        if policy == "Background":
            self._cascade(meta["uid"])
        else:
            for dep_res, dep in self._dependents(meta["uid"]):
                orphan = copy.deepcopy(dep)
                refs = orphan["metadata"].get("ownerReferences") or []
                orphan["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") != meta["uid"]]
                self.upsert(dep_res, orphan)
        return 200, gone, headers

    def _patch(
        self, res: Res, request: rendering.Request, body: Any, dry_run: bool
    ) -> tuple[int, Obj, dict[str, str]]:
        obj = self._current(res, request)
        sub = request.subresource
        if sub not in (None, "status") and not (sub == "scale" and res == DEPLOYMENTS):
            raise _error(404, "NotFound", f"the server could not find the requested resource ({sub})")
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
        if content_type == "application/json-patch+json":
            if not isinstance(body, list):
                raise _error(400, "BadRequest", "a JSON patch is a list of operations")
            new = _json_patch(copy.deepcopy(obj), body)
        elif content_type in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            if not isinstance(body, dict):
                raise _error(400, "BadRequest", "a merge patch is an object")
            pmeta = body.get("metadata") or {}
            self._preconditions(obj, pmeta.get("uid"), pmeta.get("resourceVersion"))
            if sub == "scale":
                replicas = (body.get("spec") or {}).get("replicas")
                new = _merge(
                    copy.deepcopy(obj), {"spec": {"replicas": replicas}} if replicas is not None else {}
                )
            elif sub == "status":
                new = _merge(copy.deepcopy(obj), {"status": body.get("status") or {}})
            else:
                new = _merge(copy.deepcopy(obj), {k: v for k, v in body.items() if k != "status"})
        else:
            raise _error(415, "UnsupportedMediaType", f'the media type "{content_type}" is not supported')
        new["metadata"]["resourceVersion"] = obj["metadata"]["resourceVersion"]
        new["metadata"]["uid"] = obj["metadata"]["uid"]
        self._validate(res, obj, new)
        result = new if dry_run else self._commit(res, obj, new)
        if sub == "scale":
            return 200, _scale(result), {}
        return 200, copy.deepcopy(result), {}

    def _update(
        self, res: Res, request: rendering.Request, body: Any, dry_run: bool
    ) -> tuple[int, Obj, dict[str, str]]:
        obj = self._current(res, request)
        if not isinstance(body, dict):
            raise _error(400, "BadRequest", "the body is not an object")
        meta = body.get("metadata") or {}
        self._preconditions(obj, meta.get("uid"), meta.get("resourceVersion"))
        new = copy.deepcopy(body)
        new.setdefault("metadata", {}).update(
            {"name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}
        )
        if res.namespaced:
            new["metadata"]["namespace"] = obj["metadata"].get("namespace")
        self._validate(res, obj, new)
        return 200, copy.deepcopy(new if dry_run else self._commit(res, obj, new)), {}

    @override
    async def _serve_fetch(self, request: rendering.Request) -> rendering.Payload:
        res = self._by_plural(request.resource)
        obj = self.state.get(res, {}).get((request.namespace, request.name or "")) if res else None
        if obj is None:
            raise kmock.KubernetesObjectNotFoundError()
        return obj

    @override
    async def _serve_create(self, request: rendering.Request) -> rendering.Payload:
        return await self._serve_fetch_named(request)

    @override
    async def _serve_update(self, request: rendering.Request) -> rendering.Payload:
        return await self._serve_fetch_named(request)

    @override
    async def _serve_delete(self, request: rendering.Request) -> rendering.Payload:
        return status(200, "", "deleted") | {"status": "Success"}

    async def _serve_fetch_named(self, request: rendering.Request) -> rendering.Payload:
        res = self._by_plural(request.resource)
        data = request.data if isinstance(request.data, dict) else {}
        name = request.name or (data.get("metadata") or {}).get("name", "")
        ns = request.namespace or (data.get("metadata") or {}).get("namespace")
        obj = self.state.get(res, {}).get((ns if res and res.namespaced else None, name)) if res else None
        return obj or {}

    def _select(self, res: Res, request: rendering.Request) -> list[Obj]:
        selector = parse_selector(request.params.get("labelSelector", ""))
        ns = request.namespace
        items = [
            o
            for (o_ns, _), o in sorted(
                self.state.get(res, {}).items(), key=lambda kv: (kv[0][0] or "", kv[0][1])
            )
            if (ns is None or o_ns == ns) and matches(o, selector)
        ]
        return [copy.deepcopy(o) for o in items]

    @override
    async def _serve_list(self, request: rendering.Request) -> rendering.Payload:
        res = self._by_plural(request.resource)
        if res is None:
            raise kmock.KubernetesResourceNotFoundError()
        if self.list_stalls.get(res, 0) > 0:
            self.list_stalls[res] -= 1
            self.stalled_lists += 1
            await asyncio.Event().wait()  # never answered; the client's read timeout must end it
        limit = int(request.params.get("limit") or 0)
        token = request.params.get("continue")
        if token and res in self.continue_gates:
            await self.continue_gates[res].wait()
        if token:
            snap = self._snapshots.get(token)
            if snap is None or snap[0] < self.compacted:
                raise kmock.KubernetesError(
                    status=410, reason="Expired", message="The provided continue parameter is too old"
                )
            list_rv, items = snap
        else:
            list_rv, items = self.rv, self._select(res, request)
        page, rest = (items[:limit], items[limit:]) if limit else (items, [])
        metadata: Obj = {"resourceVersion": str(list_rv)}
        if rest:
            new_token = base64.urlsafe_b64encode(orjson.dumps([list_rv, len(self._snapshots)])).decode()
            self._snapshots[new_token] = (list_rv, rest)
            metadata["continue"] = new_token
            metadata["remainingItemCount"] = len(rest)
        for item in page:
            item.pop("kind", None)  # list items carry no kind/apiVersion on a real server
            item.pop("apiVersion", None)
        return {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": metadata, "items": page}

    @override
    async def _serve_watch(self, request: rendering.Request) -> Any:  # type: ignore[override]
        res = self._by_plural(request.resource)
        if res is None:
            raise kmock.KubernetesResourceNotFoundError()
        if request.params.get("sendInitialEvents") == "true":
            if not self.watch_list:
                raise kmock.KubernetesError(
                    status=422, reason="Invalid", message="sendInitialEvents is forbidden for watch"
                )
            if request.params.get("resourceVersionMatch") != "NotOlderThan":
                raise kmock.KubernetesError(
                    status=400, reason="BadRequest", message="sendInitialEvents needs NotOlderThan"
                )
        since_text = request.params.get("resourceVersion", "")
        since = int(since_text) if since_text not in ("", "0") else None
        gone = since is not None and since < self.compacted
        if gone and not self.gone_in_stream:
            raise kmock.KubernetesError(
                status=410, reason="Expired", message=f"too old resource version: {since}"
            )
        return self._watch_stream(request, res, since, gone)

    async def _watch_stream(
        self, request: rendering.Request, res: Res, since: int | None, gone: bool
    ) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        timeout = float(request.params.get("timeoutSeconds") or 0)
        deadline = loop.time() + timeout if timeout else None
        token_deadline = self._token_deadline(request)
        if token_deadline is not None and self.token_clock is not None:
            left = max(token_deadline - self.token_clock(), 0.0)
            deadline = min(deadline, loop.time() + left) if deadline is not None else loop.time() + left
        initial_events = request.params.get("sendInitialEvents") == "true"
        bookmarks = request.params.get("allowWatchBookmarks") == "true" and self.bookmark_interval
        selector = parse_selector(request.params.get("labelSelector", ""))
        ns = request.namespace
        faults = self.watch_faults.get(res) or []
        fault = faults.pop(0) if faults else None
        queue: asyncio.Queue[tuple[int, Res, Obj]] = asyncio.Queue()

        def wanted(r: Res, event: Obj) -> bool:
            meta = event["object"].get("metadata") or {}
            return (
                r == res
                and (ns is None or meta.get("namespace") == ns)
                and matches(event["object"], selector)
            )

        backlog_rv = self.rv  # the initial-events-end bookmark's RV: the state the backlog shows
        if since is None:
            backlog = [{"type": "ADDED", "object": o} for o in self._select(res, request)]
        else:
            backlog = [e for rv, r, e in self.history if rv > since and wanted(r, e)]
        self._watchers.add(queue)  # no await since the backlog was read: nothing slips between
        self._streams[id(request)] = request._raw_request
        self.open_watches += 1
        try:
            yield b""  # send the headers now
            if gone:
                yield _line(
                    {"type": "ERROR", "object": status(410, "Expired", f"too old resource version: {since}")}
                )
                return
            sent = 0
            next_bookmark = loop.time() + (self.bookmark_interval or 0)

            async def maybe_fault() -> AsyncIterator[bytes]:
                nonlocal fault
                if fault is None or sent < fault.after:
                    return
                f, fault = fault, None
                if f.action == "garbage":
                    for garbage in f.lines:
                        yield garbage
                elif f.action == "error":
                    yield _line({"type": "ERROR", "object": f.status})
                    raise _EndStream
                elif f.action == "close":
                    raise _EndStream
                elif f.action == "drop":
                    raw = request._raw_request
                    assert raw is not None and raw.transport is not None
                    raw.transport.close()  # flushes what was written, then a truncated chunked body
                    raise _EndStream
                elif f.action == "stall":
                    await asyncio.sleep(10**6)

            try:
                async for chunk in maybe_fault():
                    yield chunk
                for event in backlog:
                    yield _line(event)
                    sent += 1
                    async for chunk in maybe_fault():
                        yield chunk
                if initial_events and self.watch_list_end:
                    yield _line(
                        {
                            "type": "BOOKMARK",
                            "object": {
                                "kind": res.kind,
                                "apiVersion": res.api_version,
                                "metadata": {
                                    "resourceVersion": str(backlog_rv),
                                    "annotations": {"k8s.io/initial-events-end": "true"},
                                },
                            },
                        }
                    )
                while True:
                    now = loop.time()
                    waits = [
                        t - now for t in (deadline, next_bookmark if bookmarks else None) if t is not None
                    ]
                    try:
                        _, r, event = await asyncio.wait_for(queue.get(), min(waits) if waits else None)
                    except TimeoutError:
                        # Compare with a margin: a timer may fire a hair early under a
                        # fast-forwarded clock, and a strict check would spin here.
                        if deadline is not None and loop.time() >= deadline - 0.001:
                            if token_deadline is not None and self.token_clock is not None:
                                raw = request._raw_request
                                transport = raw.transport if raw is not None else None
                                alive = transport is not None and not transport.is_closing()
                                expired = self.token_clock() >= token_deadline - 0.001
                                if alive and expired:  # still read
                                    self.expired_cuts += 1
                            return
                        if not bookmarks or loop.time() < next_bookmark - 0.001:
                            continue
                        next_bookmark = loop.time() + (self.bookmark_interval or 0)
                        yield _line(
                            {
                                "type": "BOOKMARK",
                                "object": {
                                    "kind": res.kind,
                                    "apiVersion": res.api_version,
                                    "metadata": {"resourceVersion": str(self.rv)},
                                },
                            }
                        )
                        continue
                    if wanted(r, event):
                        yield _line(event)
                        sent += 1
                        async for chunk in maybe_fault():
                            yield chunk
            except _EndStream:
                return
        finally:
            self._watchers.discard(queue)
            self._streams.pop(id(request), None)
            self.open_watches -= 1


YUNIKORN_VALIDATE = "/proxy/ws/v1/validate-conf"


def _quantity(value: Any) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None


def yunikorn_verdict(config: Any) -> tuple[bool, str]:
    """The part of YuniKorn's config check the tests need: a parsable partitions list, a root queue,
    and no queue guaranteeing more of a (plain-number) resource than its max."""
    if not isinstance(config, dict) or not isinstance(config.get("partitions"), list):
        return False, "yaml: no partitions"
    for partition in config["partitions"]:
        queues = partition.get("queues") if isinstance(partition, dict) else None
        if not isinstance(queues, list) or not any(
            isinstance(q, dict) and q.get("name") == "root" for q in queues
        ):
            return False, "partition without a root queue"
        stack = [(q, "") for q in queues]
        while stack:
            queue, parent = stack.pop()
            if not isinstance(queue, dict):
                return False, "a queue is not a mapping"
            path = f"{parent}.{queue.get('name')}" if parent else str(queue.get("name"))
            resources = queue.get("resources") or {}
            guaranteed, maximum = resources.get("guaranteed") or {}, resources.get("max") or {}
            for name, value in guaranteed.items():
                g, m = _quantity(value), _quantity(maximum.get(name)) if name in maximum else None
                if g is not None and m is not None and g > m:
                    return False, f"guaranteed resource {name} exceeds max for queue {path}"
            stack.extend((child, path) for child in queue.get("queues") or [])
    return True, ""


class _EndStream(Exception):
    pass


def _pod_log_target(path: str) -> tuple[str, str] | None:
    """(namespace, pod) of a pod log path, else None."""
    parts = path.strip("/").split("/")
    if (
        len(parts) == 7
        and parts[:3] == ["api", "v1", "namespaces"]
        and parts[4] == "pods"
        and parts[6] == "log"
    ):
        return parts[3], parts[5]
    return None


def _method(request: rendering.Request) -> str:
    method = request.method
    return str(method.value if isinstance(method, enums.method) else method).upper()


def _is_write(request: rendering.Request) -> bool:
    return _method(request) in ("POST", "PUT", "PATCH", "DELETE")


def _is_review(request: rendering.Request) -> bool:
    res = request.resource
    return (
        res is not None
        and res.group in REVIEW_GROUPS
        and _method(request) == "POST"
        and res.plural in ("selfsubjectaccessreviews", "selfsubjectrulesreviews", "selfsubjectreviews")
    )


def _verb(request: rendering.Request) -> str:
    """The Kubernetes verb of a request (what RBAC is checked against)."""
    method = _method(request)
    if method == "GET":
        if request.params.get("watch") in ("true", "1"):
            return "watch"
        return "get" if request.name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if request.name else "deletecollection"
    return method.lower()


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _scale(obj: Obj) -> Obj:
    meta = obj["metadata"]
    replicas = (obj.get("spec") or {}).get("replicas", 1)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta.get(k) for k in ("name", "namespace", "uid", "resourceVersion")},
        "spec": {"replicas": replicas},
        "status": {"replicas": (obj.get("status") or {}).get("replicas", replicas)},
    }


def _json_patch(obj: Obj, ops: list[Any]) -> Obj:
    """RFC 6902 ``add``/``replace``/``remove``/``test``; a failed ``test`` on the resourceVersion is a
    409 (the object changed), any other failure a 422."""
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            raise _error(400, "BadRequest", "malformed JSON patch operation")
        keys = [k.replace("~1", "/").replace("~0", "~") for k in op["path"].lstrip("/").split("/")]
        parent: Any = obj
        for key in keys[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
            if parent is None:
                raise _error(422, "Invalid", f"path {op['path']} does not exist")
        last = keys[-1]
        kind = op.get("op")
        if kind == "test":
            if not isinstance(parent, dict) or parent.get(last) != op.get("value"):
                if op["path"] == "/metadata/resourceVersion":
                    raise _error(409, "Conflict", "the object has been modified: resourceVersion test failed")
                raise _error(422, "Invalid", f"testing value {op['path']} failed")
        elif kind in ("add", "replace") and isinstance(parent, dict):
            parent[last] = op.get("value")
        elif kind == "remove" and isinstance(parent, dict) and last in parent:
            del parent[last]
        else:
            raise _error(422, "Invalid", f"cannot {kind} {op['path']}")
    return obj


def _sort_key(item: tuple[Key, Obj]) -> tuple[str, str]:
    return (item[0][0] or "", item[0][1])


def _line(event: Obj) -> bytes:
    return orjson.dumps(event) + b"\n"


def _merge(base: Obj, patch: Obj) -> Obj:
    for key, value in patch.items():
        if value is None:
            base.pop(key, None)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def populate(fake: FakeApiServer, res: Res, objs: Iterable[Obj]) -> None:
    for obj in objs:
        fake.upsert(res, obj)
