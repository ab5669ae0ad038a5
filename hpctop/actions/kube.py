"""The live cluster's actuator: job actions as safe Kubernetes requests.

Why it looks the way it does (RELIABILITY.md §2, SCHEDULERS.md §9):

- **Every request carries what makes it safe.** A cancel is a DELETE with an explicit
  ``propagationPolicy`` (batch Jobs otherwise *orphan* their pods) and ``preconditions`` on the uid
  and resourceVersion the user saw; a hold/release is a merge patch that carries
  ``metadata.resourceVersion``, which the API server turns into a precondition; everything is sent
  with ``fieldManager=hpctop``. So a request can only act on the object the user looked at.
- **The user saw a state; the server decides whether it still holds.** :meth:`KubeActions.preview`
  reads the object, remembers its uid and resourceVersion, and sends the *identical* requests with
  ``dryRun=All``: the preview is the server's own answer (admission, validation, RBAC), not
  hpctop's guess. :meth:`KubeActions.execute` then sends them with the remembered preconditions,
  without re-reading first: the server's precondition check is atomic, a client-side comparison is
  not. A 409 means the object changed: hpctop re-reads, says what changed, and raises
  :class:`StaleTarget` holding a fresh preview to ask again (M2). It never retries by itself.
- **Never retry blindly** (§2.2). 404 on a cancel is "already gone" (success). 422 and 403 are
  shown with the server's text and not retried (a 403 also drops the cached permissions). A 429
  is retried only when the server names a short ``Retry-After`` and only a bounded number of
  times, except an Eviction's 429, which is a PodDisruptionBudget saying no. A timeout, reset or
  5xx leaves the outcome unknown: hpctop re-reads the object by uid and reports what happened;
  it never sends again on its own (M5).
- **Permissions** (§2.3): a SelfSubjectRulesReview per namespace, cached briefly, says which
  actions to offer (a hint: "absent" means "probably denied"); a SelfSubjectAccessReview for the
  exact verb and object is asked right before sending; the server's 403 still wins.
- **Audit**: an intent record before sending and an outcome record per answer, with the server's
  ``Audit-Id`` (:mod:`hpctop.actions.audit`).

What each action is, per owner kind (SCHEDULERS.md §9.2):

=================  ===============================================================================
batch Job          cancel: DELETE (Background); hold/release: ``spec.suspend``; requeue: hold, then
                   release with the resourceVersion the hold returned (keeps name and uid)
Deployment         cancel: DELETE (Background); hold: ``spec.replicas: 0`` with the old count saved
                   in the ``hpctop.io/held-replicas`` annotation, in *one* RV-guarded patch (no
                   window where one is done and not the other); release restores it
bare Pod           cancel: Eviction (honours PodDisruptionBudgets; their 429 is reported, never
                   bypassed); DELETE only where the cluster serves no Eviction for it
Kueue Workload     hold/release: ``spec.active``; requeue: active false, wait (bounded, polling) for
                   ``Evicted=True`` or no quota, then active true with the RV of that read
JobSet, Kubeflow   as a batch Job, on ``spec.suspend`` / ``spec.runPolicy.suspend`` (an MPIJob is
                   read at v2beta1, then v1)
Volcano vcjob      cancel: DELETE; hold/release/requeue: a bus Command (AbortJob/ResumeJob/
                   RestartJob) naming the job's uid, then a bounded check that the phase moved;
                   priority: ``spec.priorityClassName`` while Pending; move: refused (immutable)
LeaderWorkerSet    as a Deployment (cancel; hold/release by ``spec.replicas``); no requeue
priority, move     refused elsewhere with the reason (pod priority is immutable once admitted)
=================  ===============================================================================

Sync and async: the :class:`~hpctop.actions.requests.Actuator` protocol is synchronous (the
simulator's actuator is), while the transport is asyncio. :class:`KubeActions` is the async core,
testable on one loop against the fake API server. :class:`KubeActuator` is the protocol's sync
adapter: it runs the core on a private event loop in a daemon thread, because an aiohttp session
belongs to the loop it was made on and because blocking *the* loop the console and the reflectors
run on (``run_coroutine_threadsafe(...).result()`` from that loop's own thread) would deadlock. It
refuses such a call instead. The console should call it from a worker thread, or ``await`` the
core directly.

Gang binding (:func:`bind_gang`) is for hpctop's headless scheduler: N Binding creates that the API
server does not make a transaction. See its docstring for the all-or-none rule.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from hpctop.actions.audit import AuditLog
from hpctop.actions.requests import (
    SLINKY_SCHEDULER,
    STOP_POLICIES,
    YUNIKORN_QUEUE,
    ActionForbidden,
    ActionKind,
    ActionRequest,
    ActionResult,
    Permission,
    Preview,
    queue_request,
)
from hpctop.errors import ActionFailed, ActionRefused, HpctopError
from hpctop.model.objects import JobKey, Pod
from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken
from hpctop.sources.kube.registry import ResourceRegistry, discover_registry
from hpctop.sources.kube.resources import (
    BUILTIN_RESOURCES,
    OPTIONAL_RESOURCES,
    kueue_resources,
)
from hpctop.sources.kube.resources import VOLCANO_COMMANDS as COMMANDS_RESOURCE
from hpctop.sources.kube.transport import ApiResponse, KubeClient, ReadOnlyViolation

FIELD_MANAGER = "hpctop"
HELD_ANNOTATION = "hpctop.io/held-replicas"
MERGE_PATCH = "application/merge-patch+json"
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSRR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
SSR_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"

_T = TypeVar("_T")

VOLCANO_JOB = "Job.batch.volcano.sh"
KUBEFLOW_PLURALS = {
    "PyTorchJob": "pytorchjobs",
    "TFJob": "tfjobs",
    "MPIJob": "mpijobs",
    "XGBoostJob": "xgboostjobs",
    "PaddleJob": "paddlejobs",
    "JAXJob": "jaxjobs",
}

#: the owner kinds hpctop acts on (as it keys jobs: a vcjob is ``Job.batch.volcano.sh``). Where each
#: lives (group, served version, plural) is the cluster's resource registry's to say
#: (:mod:`hpctop.sources.kube.registry`), never a table here: a Kueue that serves only v1beta1 is
#: acted on at v1beta1.
KINDS: tuple[str, ...] = (
    "Job",
    "Deployment",
    "Pod",
    "Workload",
    "JobSet",
    *KUBEFLOW_PLURALS,
    VOLCANO_JOB,
    "LeaderWorkerSet",
    "PodGroup.scheduling.x-k8s.io",
)
#: scheduler-plugins coscheduling's gang (SCHEDULERS.md §7.1): not a job, so hold/release/requeue
#: act on the job that owns it and cancel deletes that owner *and* the PodGroup
COSCHED_PODGROUP = "PodGroup.scheduling.x-k8s.io"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
SUNK_PREFIX = "sunk.coreweave.com/"
SLURM_ONLY = (
    "Slurm side only: this pod is scheduled by SUNK, whose placeholder Slurm job owns its queueing; "
    "hold, requeue and priority are done with scontrol/scancel in Slurm (hpctop is read-only there)"
)
#: SchedMD Slinky (SCHEDULERS.md §8.6): the Slurm job's options are annotations on the top workload
#: object, which slurm-bridge passes to Slurm; Slurm takes a change only while the job is pending
SLINKY_PREFIX = "slurmjob.slinky.slurm.net/"
SLINKY_PRIORITY = SLINKY_PREFIX + "priority"
SLINKY_PARTITION = SLINKY_PREFIX + "partition"
SLINKY_NODE = "slinky.slurm.net/slurm-node"
#: the owner kinds slurm-bridge groups pods by (a bare pod is its own group)
SLINKY_KINDS = frozenset({"Job", "JobSet", "LeaderWorkerSet", "Pod", *KUBEFLOW_PLURALS})
QUEUE_KINDS: dict[str, tuple[str, str]] = {
    "ClusterQueue": ("clusterqueues", ""),
    "LocalQueue": ("localqueues", "namespaced"),
}
KUEUE_GROUP = "kueue.x-k8s.io"
#: where each suspendable kind keeps its suspend flag (batch Job, JobSet and Kubeflow behave alike:
#: suspending deletes the running pods, resuming recreates them; SCHEDULERS.md §2.3)
SUSPEND_FIELD: dict[str, tuple[str, ...]] = {
    "Job": ("spec", "suspend"),
    "JobSet": ("spec", "suspend"),
    **{kind: ("spec", "runPolicy", "suspend") for kind in KUBEFLOW_PLURALS},
}
#: kinds whose priority may be changeable, depending on the object (Kueue label, Slinky annotation,
#: Workload spec.priority, vcjob priorityClassName; a Pod only to say why not)
REPRIORITIZABLE = frozenset({"Workload", "Pod", VOLCANO_JOB})
#: services held by scaling to zero (the old count saved in HELD_ANNOTATION)
SCALED_KINDS = frozenset({"Deployment", "LeaderWorkerSet"})
#: Volcano has no suspend field: hold/release/requeue are bus Commands its controller consumes
VOLCANO_COMMANDS: dict[ActionKind, str] = {
    ActionKind.HOLD: "AbortJob",
    ActionKind.RELEASE: "ResumeJob",
    ActionKind.REQUEUE: "RestartJob",
}
#: the vcjob phases that show the controller acted on each Command
VOLCANO_MOVED: dict[str, tuple[str, ...]] = {
    "AbortJob": ("Aborting", "Aborted"),
    "ResumeJob": ("Restarting", "Pending", "Running"),
    "RestartJob": ("Restarting", "Pending"),
}
VOLCANO_FINISHED = frozenset({"Completing", "Completed", "Terminating", "Terminated", "Failed"})
COMMAND_GROUP, COMMAND_VERSION = COMMANDS_RESOURCE.group, COMMANDS_RESOURCE.version

PRIORITY_REFUSAL = (
    "not supported on a live cluster for this kind: a pod's priority (spec.priority, resolved from "
    "its priorityClassName at admission) is immutable, and a batch Job's pod template is too; "
    "delete the job and resubmit it with the new priority class"
)
MOVE_REFUSAL = (
    "not supported on a live cluster for this kind: a batch Job, Deployment or pod has no queue to "
    "move to outside Kueue/YuniKorn/Volcano, and its pod template is immutable; delete and resubmit"
)
VOLCANO_MOVE_REFUSAL = (
    "a Volcano job cannot move to another queue: its spec.queue is immutable (the admission webhook "
    "rejects the change); delete it and resubmit it to the new queue"
)


class StaleTarget(ActionRefused):
    """The object changed since the user saw it (a 409 on a precondition): nothing was changed.

    ``changed`` lists what differs; ``preview`` is a fresh preview of the same action on the new
    state, to show and confirm again (M2).
    """

    title = "changed since you saw it"

    def __init__(self, detail: str, *, changed: tuple[str, ...], preview: Preview | None) -> None:
        super().__init__(detail)
        self.changed = changed
        self.preview = preview


@dataclass(frozen=True, slots=True)
class Target:
    """Where a job's owner object lives on the API server."""

    kind: str
    group: str
    version: str
    plural: str
    namespace: str
    name: str

    @classmethod
    def of(cls, key: JobKey, registry: ResourceRegistry) -> Target | None:
        """Where the job's owner is served on this cluster; None when hpctop does not act on the
        kind or the cluster does not serve it (discovery does not list it)."""
        namespace, kind, name = key
        spec = registry.spec(kind) if kind in KINDS else None
        if spec is None:
            return None
        return cls(kind, spec.group, spec.version, spec.plural, namespace, name)

    @property
    def path(self) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/namespaces/{self.namespace}/{self.plural}/{self.name}"

    @property
    def resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def at_version_of(self, obj: Mapping[str, Any]) -> Target:
        """This target at the version the object was read from (an MPIJob is v2beta1 or v1)."""
        api_version = str(obj.get("apiVersion") or "")
        group, _, version = api_version.rpartition("/")
        if version and group == self.group and version != self.version:
            return dataclasses.replace(self, version=version)
        return self

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class QueueTarget:
    """Where a Kueue queue lives: a ClusterQueue is cluster-scoped, a LocalQueue namespaced."""

    kind: str
    version: str
    namespace: str
    name: str

    @property
    def group(self) -> str:
        return KUEUE_GROUP

    @property
    def plural(self) -> str:
        return QUEUE_KINDS[self.kind][0]

    @property
    def path(self) -> str:
        base = f"/apis/{KUEUE_GROUP}/{self.version}"
        if self.namespace:
            return f"{base}/namespaces/{self.namespace}/{self.plural}/{self.name}"
        return f"{base}/{self.plural}/{self.name}"

    @property
    def resource(self) -> str:
        return f"{self.plural}.{KUEUE_GROUP}"

    def at_version_of(self, obj: Mapping[str, Any]) -> QueueTarget:
        group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
        if version and group == KUEUE_GROUP and version != self.version:
            return dataclasses.replace(self, version=version)
        return self

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass(frozen=True, slots=True)
class Step:
    """One request of an action, and the RBAC attributes it needs."""

    method: str
    path: str
    body: dict[str, Any] | None
    verb: str
    group: str
    resource: str
    subresource: str = ""
    content_type: str = "application/json"
    #: take metadata.resourceVersion from the previous step's answer (requeue's release)
    chain_rv: bool = False
    #: DELETE takes no fieldManager; everything else carries it
    field_manager: bool = True
    #: before sending, wait (bounded) until Kueue has evicted the Workload, and take the
    #: resourceVersion of that read (Kueue requeue: active false → Evicted → active true)
    wait_evicted: bool = False
    #: after a Volcano Command is accepted, the vcjob phases that show the controller acted on it
    verify_phase: tuple[str, ...] = ()

    def params(self, *, dry_run: bool) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.field_manager:
            out["fieldManager"] = FIELD_MANAGER
        if dry_run:
            out["dryRun"] = "All"
        return out

    def describe(self, *, dry_run: bool = False) -> str:
        query = urllib.parse.urlencode(self.params(dry_run=dry_run))
        body = orjson.dumps(self.body).decode() if self.body is not None else ""
        return f"{self.method} {self.path}" + (f"?{query}" if query else "") + (f" {body}" if body else "")

    def with_rv(self, rv: str) -> Step:
        body = dict(self.body or {})
        meta = dict(body.get("metadata") or {})
        meta["resourceVersion"] = rv
        body["metadata"] = meta
        return dataclasses.replace(self, body=body, chain_rv=False, wait_evicted=False)


@dataclass(frozen=True, slots=True)
class Seen:
    """The object as a preview showed it: the preconditions an execute will carry."""

    obj: dict[str, Any]
    at: float

    @property
    def uid(self) -> str:
        return str(self.obj.get("metadata", {}).get("uid", ""))

    @property
    def rv(self) -> str:
        return str(self.obj.get("metadata", {}).get("resourceVersion", ""))


@dataclass
class _Rules:
    rules: list[dict[str, Any]]
    incomplete: bool
    at: float


# -- object summaries (what changed) ---------------------------------------------------------


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


#: the spec fields the job actions set (suspend, scale, activate, priority)
_SPEC_ACTED: tuple[tuple[str, ...], ...] = (
    ("spec", "suspend"),
    ("spec", "runPolicy", "suspend"),
    ("spec", "replicas"),
    ("spec", "active"),
    ("spec", "priorityClassName"),
    ("spec", "priority"),
)
#: the labels and annotations the job actions set (queue, priority class, Slinky's fields)
_META_ACTED: tuple[tuple[str, ...], ...] = (
    ("metadata", "labels", KUEUE_QUEUE_LABEL),
    ("metadata", "labels", KUEUE_PRIORITY_LABEL),
    ("metadata", "annotations", SLINKY_PRIORITY),
    ("metadata", "annotations", SLINKY_PARTITION),
)

_SUMMARY_FIELDS: tuple[tuple[str, ...], ...] = (
    ("metadata", "uid"),
    ("metadata", "deletionTimestamp"),
    *_SPEC_ACTED,
    ("spec", "stopPolicy"),
    *_META_ACTED,
    ("status", "state", "phase"),
    ("spec", "nodeName"),
    ("status", "phase"),
    ("status", "active"),
    ("status", "ready"),
    ("status", "succeeded"),
    ("status", "failed"),
    ("status", "replicas"),
)


def summarize(obj: Mapping[str, Any]) -> dict[str, str]:
    """The fields a person cares about when deciding again, flattened to ``a.b → value``."""
    out: dict[str, str] = {}
    for path in _SUMMARY_FIELDS:
        value = _dig(obj, *path)
        if value is not None:
            out[".".join(path)] = orjson.dumps(value).decode()
    held = _dig(obj, "metadata", "annotations", HELD_ANNOTATION)
    if held is not None:
        out[f"annotation {HELD_ANNOTATION}"] = str(held)
    for cond in _dig(obj, "status", "conditions") or []:
        if isinstance(cond, dict) and cond.get("status") == "True":
            out[f"condition {cond.get('type')}"] = "True"
    return out


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
    """What changed between two versions of an object, one line per field."""
    a, b = summarize(before), summarize(after)
    lines = [f"{k}: {a.get(k, '(unset)')} → {b.get(k, '(unset)')}" for k in sorted(a.keys() | b.keys())]
    changed = tuple(
        line for line, k in zip(lines, sorted(a.keys() | b.keys()), strict=True) if a.get(k) != b.get(k)
    )
    rv_a, rv_b = _dig(before, "metadata", "resourceVersion"), _dig(after, "metadata", "resourceVersion")
    if not changed and rv_a != rv_b:
        return (f"resourceVersion {rv_a} → {rv_b} (fields hpctop does not show changed)",)
    return changed


def _finished(obj: Mapping[str, Any]) -> str | None:
    """The terminal condition, as each kind spells it (Job ``Complete``, JobSet ``Completed``,
    Kubeflow ``Succeeded``; all ``Failed``)."""
    for cond in _dig(obj, "status", "conditions") or []:
        if (
            isinstance(cond, dict)
            and cond.get("status") == "True"
            and cond.get("type") in ("Complete", "Completed", "Succeeded", "Failed")
        ):
            return str(cond.get("type"))
    return None


def _nest(path: Sequence[str], value: Any) -> dict[str, Any]:
    """``("spec", "runPolicy", "suspend"), True`` → ``{"spec": {"runPolicy": {"suspend": True}}}``."""
    out: Any = value
    for key in reversed(path):
        out = {key: out}
    assert isinstance(out, dict)
    return out


def _contains(obj: Any, wanted: Any) -> bool:
    """Whether ``obj`` holds every value of the merge patch ``wanted`` (re-reading after a lost answer)."""
    if isinstance(wanted, dict):
        return isinstance(obj, dict) and all(_contains(obj.get(k), v) for k, v in wanted.items())
    return bool(obj == wanted)


def _kueue_evicted(obj: Mapping[str, Any]) -> str | None:
    """Why a Workload counts as evicted for a requeue (``Evicted=True``, or holding no quota), or None."""
    conditions = {
        str(c.get("type")): c for c in _dig(obj, "status", "conditions") or [] if isinstance(c, dict)
    }
    evicted = conditions.get("Evicted")
    if evicted is not None and evicted.get("status") == "True":
        return f"Evicted=True ({evicted.get('reason') or 'no reason given'})"
    if not any(conditions.get(t, {}).get("status") == "True" for t in ("QuotaReserved", "Admitted")):
        return "not admitted (holds no quota)"
    return None


def _vc_phase(obj: Mapping[str, Any]) -> str:
    return str(_dig(obj, "status", "state", "phase") or "")


def _has_controller(obj: Mapping[str, Any]) -> bool:
    return any(
        isinstance(ref, dict) and ref.get("controller")
        for ref in _dig(obj, "metadata", "ownerReferences") or []
    )


def _is_sunk(pod: Mapping[str, Any]) -> bool:
    """A pod CoreWeave SUNK schedules: its queueing lives in a placeholder Slurm job (§8.6)."""
    scheduler = str(_dig(pod, "spec", "schedulerName") or "")
    annotations = _dig(pod, "metadata", "annotations") or {}
    return scheduler.endswith("-slurm-scheduler") or any(str(k).startswith(SUNK_PREFIX) for k in annotations)


def _kueue_admitted(obj: Mapping[str, Any]) -> str | None:
    """Why a Workload is no longer pending (QuotaReserved or Admitted is True), or None."""
    for cond in _dig(obj, "status", "conditions") or []:
        if (
            isinstance(cond, dict)
            and cond.get("status") == "True"
            and cond.get("type") in ("QuotaReserved", "Admitted", "Finished")
        ):
            return f"{cond.get('type')}=True"
    return None


def _message(response: ApiResponse) -> str:
    body = response.json()
    if isinstance(body, dict) and body.get("kind") == "Status":
        return str(body.get("message") or body.get("reason") or "")[:512]
    return response.body[:256].decode("utf-8", "replace")


def _is_pdb(response: ApiResponse) -> bool:
    body = response.json()
    causes = _dig(body, "details", "causes") or []
    if any(isinstance(c, dict) and c.get("reason") == "DisruptionBudget" for c in causes):
        return True
    return "disruption budget" in _message(response).lower()


# -- the async core ----------------------------------------------------------------------------


class KubeActions:
    """Previews and executes job actions on one cluster through a :class:`KubeClient`.

    ``client`` must be made with ``read_only=False`` to act; a read-only client makes every
    preview say so and every execute raise :class:`ReadOnlyViolation` before any I/O (R1).
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        audit: AuditLog | None = None,
        propagation: str = "Background",
        rules_ttl: float = 30.0,
        max_throttle_wait: float = 10.0,
        max_throttle_retries: int = 2,
        evict_timeout: float = 60.0,
        phase_timeout: float = 10.0,
        poll_interval: float = 1.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        registry: ResourceRegistry | None = None,
    ) -> None:
        if propagation not in ("Background", "Foreground"):
            raise ValueError("propagation must be Background or Foreground (Orphan would leave pods running)")
        self.client = client
        self.audit = audit
        self.propagation = propagation
        self.rules_ttl = rules_ttl
        self.max_throttle_wait = max_throttle_wait
        self.max_throttle_retries = max_throttle_retries
        #: how long a Kueue requeue waits for the eviction, and a Volcano Command for the phase to
        #: move, polling every ``poll_interval`` seconds: bounded, so an absent controller is a
        #: clear message instead of a hung console
        self.evict_timeout = evict_timeout
        self.phase_timeout = phase_timeout
        self.poll_interval = poll_interval
        self._clock = clock
        self._sleep = sleep
        #: where each kind is served on this cluster: given (the session's discovery), or
        #: discovered on first use and forgotten on a context switch
        self._given_registry = registry
        self._registry = registry
        self._seen: dict[ActionRequest, Seen] = {}
        self._rules: dict[str, _Rules] = {}
        self._user: str | None = None
        #: requests on an owner job that stand for a Workload's priority-class/queue change
        self._redirected: set[ActionRequest] = set()

    @property
    def read_only(self) -> bool:
        return self.client.read_only

    @property
    def context(self) -> str:
        return self.client.connection.context or ""

    def forget(self) -> None:
        """Drop cached permissions, identity and previewed states (on a context switch)."""
        self._seen.clear()
        self._rules.clear()
        self._user = None
        self._registry = self._given_registry

    async def registry(self) -> ResourceRegistry:
        """The cluster's resource registry (discovered once, on the first action that needs it)."""
        if self._registry is None:
            self._registry = await discover_registry(self.client)
        return self._registry

    async def target(self, key: JobKey) -> Target | None:
        return Target.of(key, await self.registry())

    async def close(self) -> None:
        await self.client.close()

    # -- reading --------------------------------------------------------------------------------

    async def _read(self, target: Target | QueueTarget) -> dict[str, Any] | None:
        """The object now, or None when it does not exist."""
        response = await self.client.request("GET", target.path)
        if response.status == 404:
            return None
        if response.status == 401:
            await self.client.connection.reauthenticate()
            response = await self.client.request("GET", target.path)
        error = response.error()
        if error is not None:
            raise ActionFailed(f"cannot read {target}: {error.detail}")
        body = response.json()
        if not isinstance(body, dict):
            raise ActionFailed(f"cannot read {target}: the server's answer is not an object")
        return body

    async def _locate(self, target: Target) -> tuple[Target, dict[str, Any] | None]:
        """Read the object at the version the cluster serves (the registry's), or None when gone."""
        return target, await self._read(target)

    async def _poll(
        self, target: Target, seen: Seen, done: Callable[[dict[str, Any]], str | None], timeout: float
    ) -> tuple[dict[str, Any] | None, str | None]:
        """Re-read until ``done`` names a reason, at most ``timeout`` seconds: (last read, reason).

        Raises :class:`ActionFailed` when the object is gone or replaced meanwhile (a new uid is
        not the object the user acted on)."""
        polls = max(1, int(timeout / self.poll_interval) + 1) if self.poll_interval > 0 else 1
        now: dict[str, Any] | None = None
        for attempt in range(polls):
            if attempt:
                await self._sleep(self.poll_interval)
            try:
                now = await self._read(target)
            except (ServerUnreachable, StreamBroken) as exc:
                raise ActionFailed(f"lost the API server while waiting on {target}: {exc.detail}") from None
            if now is None or _dig(now, "metadata", "uid") != seen.uid:
                raise ActionFailed(f"{target} was deleted or replaced while hpctop waited on it")
            reason = done(now)
            if reason is not None:
                return now, reason
        return now, None

    # -- identity and permissions ---------------------------------------------------------------

    async def whoami(self) -> str:
        """The user name the server knows us by (SelfSubjectReview), else the context's name."""
        if self._user is None:
            name = ""
            try:
                response = await self.client.request("POST", SSR_PATH, body=_review("SelfSubjectReview", {}))
                if response.ok:
                    name = str(_dig(response.json(), "status", "userInfo", "username") or "")
            except (ServerUnreachable, StreamBroken):
                pass
            self._user = name or f"context:{self.context}"
        return self._user

    async def access_review(
        self, verb: str, group: str, resource: str, namespace: str, name: str = "", subresource: str = ""
    ) -> tuple[bool, str]:
        """A SelfSubjectAccessReview for exactly this request: (allowed, the server's reason)."""
        attrs = {
            "verb": verb,
            "group": group,
            "resource": resource,
            "subresource": subresource,
            "namespace": namespace,
            "name": name,
        }
        response = await self.client.request(
            "POST", SSAR_PATH, body=_review("SelfSubjectAccessReview", {"resourceAttributes": attrs})
        )
        error = response.error()
        if error is not None:
            return False, f"the access review failed: {error.detail}"
        status = _dig(response.json(), "status") or {}
        allowed = bool(status.get("allowed"))
        reason = str(status.get("reason") or status.get("evaluationError") or "")
        return allowed, reason

    async def rules(self, namespace: str) -> tuple[list[dict[str, Any]], bool]:
        """The SelfSubjectRulesReview of a namespace (cached ``rules_ttl`` seconds): rules, incomplete."""
        cached = self._rules.get(namespace)
        now = self._clock()
        if cached is not None and now - cached.at < self.rules_ttl:
            return cached.rules, cached.incomplete
        response = await self.client.request(
            "POST", SSRR_PATH, body=_review("SelfSubjectRulesReview", {"namespace": namespace})
        )
        error = response.error()
        if error is not None:
            return [], True
        status = _dig(response.json(), "status") or {}
        rules = [r for r in status.get("resourceRules") or [] if isinstance(r, dict)]
        entry = _Rules(rules, bool(status.get("incomplete")), now)
        self._rules[namespace] = entry
        return entry.rules, entry.incomplete

    async def permissions(self, namespace: str, kind: str) -> dict[ActionKind, Permission]:
        """Which actions to offer on a job of owner ``kind`` in ``namespace``, with reasons."""
        out: dict[ActionKind, Permission] = {}
        if self.read_only:
            return {k: Permission(False, "read-only mode") for k in ActionKind}
        rules, incomplete = await self.rules(namespace)
        for action in ActionKind:
            needs = _needs(action, kind)
            if isinstance(needs, str):
                out[action] = Permission(False, needs)
                continue
            missing = [n for n in needs if not any(_rule_grants(r, *n) for r in rules)]
            if not missing:
                out[action] = Permission(True, "allowed by the rules review")
                continue
            verb, group, resource, sub = missing[0]
            what = f"{verb} {resource}{'/' + sub if sub else ''}{'.' + group if group else ''}"
            if incomplete:
                out[action] = Permission(None, f"unknown: the rules review is incomplete ({what})")
            else:
                out[action] = Permission(False, f"probably denied: no rule grants {what} in {namespace}")
        return out

    # -- planning -------------------------------------------------------------------------------

    def _static_refusal(self, request: ActionRequest) -> str | None:
        kind = request.job[1]
        if kind not in KINDS:
            return _unknown_kind(request.kind, kind)
        if kind == COSCHED_PODGROUP and request.kind in (ActionKind.PRIORITY, ActionKind.MOVE):
            return (
                f"{request.kind.value} of a coscheduling PodGroup is not supported: it has no priority or "
                "queue of its own; act on the job that owns its pods"
            )
        # Priority/move of the kinds Kueue, Slinky or SUNK may manage is decided on the object
        # (_state_refusal): the same kind is re-prioritizable under Kueue and not without it.
        # A Kueue Workload's priority-class/queue change is redirected to its owner job's labels
        # (_via_owner); only such requests may re-prioritize/move a batch Job, JobSet or Kubeflow job.
        # A Slinky job's priority/partition are annotations of its owner: only a request the console
        # marked as Slinky's (its pods' schedulerName) reads the object to check it really is one.
        redirected = request in self._redirected or _slinky_request(request)
        if request.kind == ActionKind.PRIORITY and kind not in REPRIORITIZABLE and not redirected:
            return PRIORITY_REFUSAL
        if request.kind == ActionKind.MOVE and not redirected:
            if kind == VOLCANO_JOB:
                return VOLCANO_MOVE_REFUSAL
            if kind == "Workload":
                return (
                    f"{request.job[2]} has no owner job: a Kueue job moves by its owner's "
                    f"{KUEUE_QUEUE_LABEL} "
                    "label (Kueue rebuilds the Workload from the job)"
                )
            if kind != "Pod":
                return MOVE_REFUSAL
        if (
            kind == VOLCANO_JOB
            and request.kind == ActionKind.PRIORITY
            and not (isinstance(request.value, str) and request.value)
        ):
            return (
                "a Volcano job's priority is the name of a PriorityClass (spec.priorityClassName); "
                f"{request.value!r} is not one"
            )
        if kind == "LeaderWorkerSet" and request.kind == ActionKind.REQUEUE:
            return "requeue of a LeaderWorkerSet is not supported: hold it (scale to 0), then release it"
        if kind == "Workload" and request.kind == ActionKind.CANCEL:
            return "cancel a Kueue Workload by deleting its owner job; the Workload is garbage-collected"
        return None

    def _state_refusal(self, request: ActionRequest, target: Target, obj: dict[str, Any]) -> str | None:
        uid = str(_dig(obj, "metadata", "uid") or "")
        if request.job_uid and request.job_uid != uid:
            return (
                f"{target} was replaced since you saw it (uid {request.job_uid[:8]}… is now {uid[:8]}…); "
                "refresh and try again"
            )
        kind = request.kind
        if kind == ActionKind.CANCEL:
            return None
        if kind in (ActionKind.PRIORITY, ActionKind.MOVE) and _slinky_request(request):
            return _slinky_refusal(kind, target, obj, request.value)
        if target.kind == "Pod":
            if _is_sunk(obj):
                return SLURM_ONLY
            if kind == ActionKind.PRIORITY:
                return PRIORITY_REFUSAL
            if kind == ActionKind.MOVE:
                return MOVE_REFUSAL
            return (
                f"a bare pod cannot be {kind.value}d: Kubernetes has no suspend for pods "
                "(cancel it, or run it under a Job)"
            )
        if target.kind == COSCHED_PODGROUP:
            return (
                f"{target} has no owner job with a suspend field (Job, JobSet, Kubeflow): a coscheduling "
                f"PodGroup itself cannot be {kind.value}d; act on the workload that creates its pods"
            )
        if kind in (ActionKind.PRIORITY, ActionKind.MOVE) and target.kind != VOLCANO_JOB:
            return _reprioritize_refusal(kind, target, obj, request.value)
        suspend_path = SUSPEND_FIELD.get(target.kind)
        if suspend_path is not None:
            field_ = ".".join(suspend_path)
            labels = _dig(obj, "metadata", "labels") or {}
            if "kueue.x-k8s.io/queue-name" in labels:
                return (
                    f"{target} is managed by Kueue, which owns {field_}: hold or release its "
                    "Workload instead (spec.active)"
                )
            finished = _finished(obj)
            if finished:
                return f"{target} has finished ({finished}); there is nothing to {kind.value}"
            suspended = bool(_dig(obj, *suspend_path))
            if kind == ActionKind.HOLD and suspended:
                return f"{target} is already held ({field_} is true)"
            if kind == ActionKind.RELEASE and not suspended:
                return f"{target} is not held ({field_} is false)"
            if kind == ActionKind.REQUEUE and suspended:
                return f"{target} is held; release it instead of requeueing"
        if target.kind in SCALED_KINDS:
            replicas = _dig(obj, "spec", "replicas")
            held = _dig(obj, "metadata", "annotations", HELD_ANNOTATION)
            if kind == ActionKind.HOLD and replicas == 0:
                return f"{target} is already scaled to 0"
            if kind == ActionKind.RELEASE and held is None:
                return f"{target} was not held by hpctop (no {HELD_ANNOTATION} annotation): scale it yourself"
            if kind == ActionKind.REQUEUE:
                return f"requeue of a {target.kind} is not supported: hold, then release"
        if target.kind == "Workload":
            active = _dig(obj, "spec", "active")
            active = True if active is None else bool(active)
            if kind == ActionKind.HOLD and not active:
                return f"{target} is already held (spec.active is false)"
            if kind == ActionKind.RELEASE and active:
                return f"{target} is not held (spec.active is true)"
            if kind == ActionKind.REQUEUE and not active:
                return f"{target} is held (spec.active is false); release it instead of requeueing"
        if target.kind == VOLCANO_JOB:
            return _volcano_refusal(kind, target, obj)
        return None

    def _steps(self, request: ActionRequest, target: Target, obj: dict[str, Any]) -> list[Step]:
        uid = str(_dig(obj, "metadata", "uid") or "")
        rv = str(_dig(obj, "metadata", "resourceVersion") or "")
        kind = request.kind
        g, res = target.group, target.plural
        if kind == ActionKind.CANCEL:
            preconditions = {"uid": uid, "resourceVersion": rv}
            if target.kind == "Pod" and _is_sunk(obj):
                # SUNK's syncer rewrites the pod's status all the time, so a resourceVersion
                # precondition would 409 for no reason; the uid alone pins the pod the user saw.
                # No Eviction: deleting the pod is what cancels its placeholder Slurm job.
                options = {
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "propagationPolicy": "Background",
                    "preconditions": {"uid": uid},
                }
                return [Step("DELETE", target.path, options, "delete", "", "pods", field_manager=False)]
            if target.kind == COSCHED_PODGROUP:
                return self._podgroup_cancel(target, obj)
            if target.kind == "Pod":
                eviction = {
                    "apiVersion": "policy/v1",
                    "kind": "Eviction",
                    "metadata": {"name": target.name, "namespace": target.namespace},
                    "deleteOptions": {"preconditions": preconditions},
                }
                return [Step("POST", target.path + "/eviction", eviction, "create", g, res, "eviction")]
            options = {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "propagationPolicy": self.propagation,
                "preconditions": preconditions,
            }
            return [Step("DELETE", target.path, options, "delete", g, res, field_manager=False)]

        def patch(body: dict[str, Any], chain: bool = False, wait: bool = False) -> Step:
            # metadata is merged, not replaced: a body with annotations keeps its RV precondition
            body = body | {"metadata": {"resourceVersion": rv, **(body.get("metadata") or {})}}
            return Step(
                "PATCH", target.path, body, "patch", g, res, content_type=MERGE_PATCH, chain_rv=chain,
                wait_evicted=wait,
            )  # fmt: skip

        if kind in (ActionKind.PRIORITY, ActionKind.MOVE) and _slinky_request(request):
            key = SLINKY_PRIORITY if kind == ActionKind.PRIORITY else SLINKY_PARTITION
            return [patch({"metadata": {"annotations": {key: str(request.value)}}})]
        if kind in (ActionKind.PRIORITY, ActionKind.MOVE) and target.kind != VOLCANO_JOB:
            if target.kind == "Workload":
                return [patch({"spec": {"priority": request.value}})]
            label = KUEUE_PRIORITY_LABEL if kind == ActionKind.PRIORITY else KUEUE_QUEUE_LABEL
            return [patch({"metadata": {"labels": {label: str(request.value)}}})]
        suspend_path = SUSPEND_FIELD.get(target.kind)
        if suspend_path is not None:
            hold = patch(_nest(suspend_path, True))
            release = patch(_nest(suspend_path, False), chain=kind == ActionKind.REQUEUE)
            return {
                ActionKind.HOLD: [hold],
                ActionKind.RELEASE: [release],
                ActionKind.REQUEUE: [hold, release],
            }[kind]
        if target.kind == VOLCANO_JOB:
            if kind == ActionKind.PRIORITY:
                return [patch({"spec": {"priorityClassName": str(request.value)}})]
            return [self._command_step(target, uid, VOLCANO_COMMANDS[kind])]
        if target.kind == "Workload" and kind == ActionKind.REQUEUE:
            # The release waits for Kueue's eviction and carries the RV of that read: Kueue rewrites
            # the Workload's status while evicting, so the hold's RV is stale by then.
            return [patch({"spec": {"active": False}}), patch({"spec": {"active": True}}, wait=True)]
        if target.kind in SCALED_KINDS:
            if kind == ActionKind.HOLD:
                replicas = _dig(obj, "spec", "replicas")
                saved = str(1 if replicas is None else replicas)
                return [
                    patch({"metadata": {"annotations": {HELD_ANNOTATION: saved}}, "spec": {"replicas": 0}})
                ]
            held = _dig(obj, "metadata", "annotations", HELD_ANNOTATION)
            try:
                restore = max(0, int(str(held)))
            except ValueError:
                restore = 1
            return [
                patch({"metadata": {"annotations": {HELD_ANNOTATION: None}}, "spec": {"replicas": restore}})
            ]
        # Workload
        return [patch({"spec": {"active": kind == ActionKind.RELEASE}})]

    def _podgroup_cancel(self, target: Target, obj: dict[str, Any]) -> list[Step]:
        """Cancel a coscheduling gang: delete its owner (which deletes the pods), then the PodGroup.

        Deleting only the PodGroup would leave the pods Pending forever at Permit; deleting only
        the owner leaves a PodGroup that a resubmitted job of the same name would join. The owner
        delete carries the owner's uid from the ownerReference (its resourceVersion is unknown
        without another read, and the uid is what pins the object the user saw).
        """
        steps: list[Step] = []
        for ref in _dig(obj, "metadata", "ownerReferences") or []:
            if not isinstance(ref, dict):
                continue
            key = (target.namespace, str(ref.get("kind") or ""), str(ref.get("name") or ""))
            owner = Target.of(key, self._registry) if self._registry is not None else None
            if owner is None or owner.kind in ("Pod", COSCHED_PODGROUP):
                continue
            options = {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "propagationPolicy": self.propagation,
                "preconditions": {"uid": str(ref.get("uid") or "")},
            }
            steps.append(
                Step("DELETE", owner.path, options, "delete", owner.group, owner.plural, field_manager=False)
            )
            break
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": self.propagation,
            "preconditions": {
                "uid": str(_dig(obj, "metadata", "uid") or ""),
                "resourceVersion": str(_dig(obj, "metadata", "resourceVersion") or ""),
            },
        }
        steps.append(
            Step("DELETE", target.path, options, "delete", target.group, target.plural, field_manager=False)
        )
        return steps

    async def _via_owner(self, request: ActionRequest) -> ActionRequest:
        """The request on the owner job, where the owner is what the API lets one change.

        A coscheduling PodGroup's hold/release/requeue is its owner's suspend, so every rule of that
        kind applies unchanged. A Kueue Workload's move, and its priority given as a
        WorkloadPriorityClass name, are its owner job's labels: Kueue rebuilds the Workload from the
        job, and its webhook guards the job's labels (only while suspended). A numeric priority stays
        on the Workload (``spec.priority``).
        """
        kind = request.job[1]
        cosched = kind == COSCHED_PODGROUP and request.kind in (
            ActionKind.HOLD, ActionKind.RELEASE, ActionKind.REQUEUE,
        )  # fmt: skip
        kueue = kind == "Workload" and (
            request.kind == ActionKind.MOVE
            or (request.kind == ActionKind.PRIORITY and isinstance(request.value, str))
        )
        if not (cosched or kueue):
            return request
        target = await self.target(request.job)
        if target is None:
            return request
        try:
            obj = await self._read(target)
        except (ServerUnreachable, StreamBroken):
            return request
        if obj is None:
            return request
        for ref in _dig(obj, "metadata", "ownerReferences") or []:
            if isinstance(ref, dict) and str(ref.get("kind")) in SUSPEND_FIELD and ref.get("name"):
                owner = dataclasses.replace(
                    request,
                    job=(request.job[0], str(ref["kind"]), str(ref["name"])),
                    job_uid=str(ref.get("uid") or ""),
                )
                if kueue:
                    self._redirected.add(owner)
                return owner
        return request

    @staticmethod
    def _command_step(target: Target, uid: str, action: str) -> Step:
        """The bus Command vcctl would create (SCHEDULERS.md §6.4).

        A create cannot carry a precondition on another object, so the Command names the job's uid
        twice: in ``target`` (what Volcano's controller acts on) and as the controller
        ``ownerReference`` (if the job is replaced, the garbage collector deletes the orphaned
        Command). ``blockOwnerDeletion`` is left out: with the OwnerReferencesPermissionEnforcement
        admission plugin it would also need ``update jobs/finalizers``.
        """
        ref = {
            "apiVersion": f"{target.group}/{target.version}",
            "kind": "Job",
            "name": target.name,
            "uid": uid,
            "controller": True,
        }
        body = {
            "apiVersion": f"{COMMAND_GROUP}/{COMMAND_VERSION}",
            "kind": "Command",
            "metadata": {
                "generateName": f"{target.name}-{action.lower()}-",
                "namespace": target.namespace,
                "ownerReferences": [ref],
            },
            "action": action,
            "target": ref,
        }
        path = f"/apis/{COMMAND_GROUP}/{COMMAND_VERSION}/namespaces/{target.namespace}/commands"
        return Step(
            "POST", path, body, "create", COMMAND_GROUP, "commands", verify_phase=VOLCANO_MOVED[action]
        )

    # -- the preview ----------------------------------------------------------------------------

    async def preview(self, request: ActionRequest) -> Preview:
        """The server's dry run of the exact requests an execute would send."""
        asked = request
        request = await self._via_owner(request)
        if request is not asked:
            preview = await self.preview(request)
            note = f"acts on {request.job[1]} {request.job[2]}, the owner of {asked.job[1]} {asked.job[2]}"
            return dataclasses.replace(preview, request=asked, changes=(note, *preview.changes))
        refusal = self._static_refusal(request)
        if refusal is not None:  # refused without even a read
            return Preview(request, False, (), refusal=refusal)
        try:
            target = await self.target(request.job)
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"cannot read the cluster's discovery: {exc.detail}")
        if target is None:
            return Preview(request, False, (), refusal=refusal or _not_served(request.job[1]))
        try:
            target, obj = await self._locate(target)
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"cannot read {target}: {exc.detail}")
        if obj is None:
            gone = (
                "already gone: nothing to cancel" if request.kind == ActionKind.CANCEL else "no longer exists"
            )
            return Preview(request, False, (), refusal=f"{target} {gone}")
        refusal = self._state_refusal(request, target, obj)
        if refusal is not None:
            return Preview(request, False, (), refusal=refusal)
        terminating = _dig(obj, "metadata", "deletionTimestamp")
        if terminating and request.kind == ActionKind.CANCEL:
            finalizers = ", ".join(_dig(obj, "metadata", "finalizers") or []) or "none"
            return Preview(
                request,
                False,
                (),
                refusal=f"{target} is already terminating (since {terminating}; finalizers: {finalizers})",
            )
        steps = self._steps(request, target, obj)
        described = tuple(s.describe() for s in steps)
        if self.read_only:
            return Preview(
                request,
                False,
                (),
                refusal="read-only mode: no action is sent to the cluster",
                requests=described,
            )
        try:
            answer = await self.client.request(
                steps[0].method,
                steps[0].path,
                params=steps[0].params(dry_run=True),
                body=steps[0].body,
                content_type=steps[0].content_type,
            )
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"preview failed: {exc.detail}", requests=described)
        self._seen[request] = Seen(obj, self._clock())
        if answer.status == 400 and "dry" in _message(answer).lower():
            changes = (
                "server preview unavailable: " + _message(answer),
                *self._expected(request, target, obj),
            )
            return Preview(request, True, changes, requests=described)
        if not answer.ok:
            self._seen.pop(request, None)
            return Preview(
                request,
                False,
                (),
                refusal=f"the server would refuse this (HTTP {answer.status}): {_message(answer)}",
                requests=described,
            )
        changes = self._dry_run_changes(request, target, obj, answer) + self._expected(request, target, obj)
        return Preview(request, True, changes, requests=described)

    def _dry_run_changes(
        self, request: ActionRequest, target: Target, obj: dict[str, Any], answer: ApiResponse
    ) -> tuple[str, ...]:
        would = answer.json()
        prefix = "server dry run: "
        if target.kind == VOLCANO_JOB and request.kind in VOLCANO_COMMANDS:
            name = _dig(would, "metadata", "name") or "a Command"
            action = VOLCANO_COMMANDS[request.kind]
            return (f"{prefix}Command {action} ({name}) for {target} would be created",)
        if request.kind == ActionKind.CANCEL:
            if target.kind == "Pod":
                return (f"{prefix}{target} would be evicted (PodDisruptionBudgets allow it now)",)
            if isinstance(would, dict) and _dig(would, "metadata", "deletionTimestamp"):
                return (f"{prefix}{target} would be marked for deletion ({self.propagation} propagation)",)
            return (f"{prefix}{target} would be deleted ({self.propagation} propagation)",)
        if not isinstance(would, dict):
            return (f"{prefix}accepted",)
        changed = diff(obj, would)
        return tuple(prefix + c for c in changed) or (f"{prefix}accepted, no visible change",)

    def _expected(self, request: ActionRequest, target: Target, obj: dict[str, Any]) -> tuple[str, ...]:
        """What controllers will do afterwards (not part of the dry run's answer)."""
        kind = request.kind
        active = _dig(obj, "status", "active") or 0
        if kind in (ActionKind.PRIORITY, ActionKind.MOVE) and _slinky_request(request):
            what = "priority" if kind == ActionKind.PRIORITY else "partition"
            return (
                f"slurm-bridge passes the new {what} to its Slurm job, which Slurm validates and applies "
                "only while the job is pending (a refusal shows in the pods' events, not here)",
            )
        if kind in (ActionKind.PRIORITY, ActionKind.MOVE):
            return _expected_backend(kind, target, obj)
        if target.kind == "Job":
            if kind == ActionKind.CANCEL:
                return (f"its pods are deleted by the garbage collector ({active} active)",)
            if kind in (ActionKind.HOLD, ActionKind.REQUEUE):
                notes = [f"the job controller deletes its {active} active pod(s) and resets startTime"]
                if kind == ActionKind.REQUEUE:
                    notes.append("then spec.suspend is set back to false: same name and uid, pods recreated")
                return tuple(notes)
            return ("the job controller creates its pods again",)
        if target.kind == "Deployment":
            if kind == ActionKind.CANCEL:
                return ("this is a service (Deployment): its ReplicaSets and pods are deleted too",)
            if kind == ActionKind.HOLD:
                return (f"the old replica count is kept in the {HELD_ANNOTATION} annotation",)
        if target.kind == "Workload" and kind == ActionKind.HOLD:
            return ("Kueue evicts it if admitted (Deactivated) and suspends its job",)
        if target.kind == "Workload" and kind == ActionKind.REQUEUE:
            return (
                "Kueue evicts it if admitted (Deactivated) and suspends its job",
                f"hpctop waits up to {self.evict_timeout:g}s for Evicted=True, then sets spec.active back "
                "to true: Kueue requeues it (Requeued, Reactivated)",
            )
        return _expected_backend(kind, target, obj)

    # -- execution ------------------------------------------------------------------------------

    def _audit(self, **fields: Any) -> None:
        if self.audit is not None:
            self.audit.append(context=self.context, cluster=self.client.connection.server, **fields)

    async def execute(self, request: ActionRequest) -> ActionResult:
        """Send the action: preconditions from the last preview of this request (else a fresh read).

        Returns a result on success; raises :class:`ActionRefused` when nothing was sent or the
        server changed nothing (:class:`StaleTarget` on a 409, with a fresh preview), and
        :class:`ActionFailed` when the server refused or the outcome could not be confirmed.
        """
        request = await self._via_owner(request)
        job = "/".join(request.job)
        refusal = self._static_refusal(request)
        if refusal is not None:
            raise ActionRefused(refusal)
        target = await self.target(request.job)
        if target is None:
            raise ActionRefused(refusal or _not_served(request.job[1]))
        if self.read_only:
            raise ReadOnlyViolation("read-only mode: no action is sent to the cluster")
        seen = self._seen.pop(request, None)
        if seen is None:
            target, obj = await self._locate(target)
            if obj is None:
                if request.kind == ActionKind.CANCEL:
                    return self._result(request, True, f"{target} already gone", outcome="gone")
                raise ActionRefused(f"{target} no longer exists")
            seen = Seen(obj, self._clock())
        obj = seen.obj
        target = target.at_version_of(obj)
        refusal = self._state_refusal(request, target, obj)
        if refusal is not None:
            raise ActionRefused(refusal)
        if request.kind == ActionKind.CANCEL and _dig(obj, "metadata", "deletionTimestamp"):
            # Terminating: shown as such, and the delete is not sent again (M4).
            return self._result(request, True, f"{target} is already terminating; nothing sent")
        steps = self._steps(request, target, obj)
        user = await self.whoami()
        for step in steps:
            allowed, reason = await self.access_review(
                step.verb, step.group, step.resource, target.namespace, target.name, step.subresource
            )
            if not allowed and step.subresource == "eviction":
                fallback = self._delete_pod_step(target, obj)
                ok, _ = await self.access_review("delete", "", "pods", target.namespace, target.name)
                if ok:
                    steps = [fallback]
                    break
            if not allowed:
                what = f"{step.verb} {step.resource}{'/' + step.subresource if step.subresource else ''}"
                message = (
                    f"not allowed: you may not {what} in {target.namespace} (SelfSubjectAccessReview"
                    + (f": {reason}" if reason else "")
                    + "); nothing was sent"
                )
                self._audit(
                    phase="refused", user=user, action=request.kind.value, job=job, uid=seen.uid, ok=False,
                    message=message,
                )  # fmt: skip
                raise ActionRefused(message)
        self._audit(
            phase="intent",
            user=user,
            action=request.kind.value,
            job=job,
            uid=seen.uid,
            method=" + ".join(s.method for s in steps),
            path=steps[0].path,
            dry_run=False,
            preconditions={"uid": seen.uid, "resourceVersion": seen.rv},
            message="; ".join(s.describe() for s in steps),
        )
        return await self._run(request, target, seen, steps, user)

    def _delete_pod_step(self, target: Target, obj: dict[str, Any]) -> Step:
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": "Background",
            "preconditions": {
                "uid": str(_dig(obj, "metadata", "uid") or ""),
                "resourceVersion": str(_dig(obj, "metadata", "resourceVersion") or ""),
            },
        }
        return Step("DELETE", target.path, options, "delete", "", "pods", field_manager=False)

    def _result(
        self,
        request: ActionRequest,
        ok: bool,
        message: str,
        changes: tuple[str, ...] = (),
        outcome: str = "done",
    ) -> ActionResult:
        return ActionResult(request, ok, message, changes, at=self._clock(), outcome=outcome)

    async def _send(
        self, step: Step, job: str, user: str, request: ActionRequest, uid: str, action: str = ""
    ) -> ApiResponse:
        """One request, with the only retries that are safe: once after a 401 (the request was not
        processed), and a 429 with a short Retry-After, a bounded number of times. ``action`` names
        the action in the audit record (by default the request's kind)."""
        throttled = 0
        reauthenticated = False
        while True:
            response = await self.client.request(
                step.method, step.path, params=step.params(dry_run=False), body=step.body,
                content_type=step.content_type,
            )  # fmt: skip
            self._audit(
                phase="outcome",
                user=user,
                action=action or request.kind.value,
                job=job,
                uid=uid,
                method=step.method,
                path=step.path,
                status=response.status,
                audit_id=response.audit_id or "",
                ok=response.ok,
                message=_message(response) if not response.ok else "; ".join(response.warnings),
            )
            if response.status == 401 and not reauthenticated:
                reauthenticated = True
                await self.client.connection.reauthenticate()
                continue
            if response.status == 429 and not (step.subresource == "eviction" and _is_pdb(response)):
                error = response.error()
                wait = error.retry_after if error is not None and error.retry_after is not None else 1.0
                if throttled < self.max_throttle_retries and wait <= self.max_throttle_wait:
                    throttled += 1
                    await self._sleep(wait)
                    continue
            return response

    async def _run(
        self, request: ActionRequest, target: Target, seen: Seen, steps: list[Step], user: str
    ) -> ActionResult:
        job = "/".join(request.job)
        done: list[str] = []
        previous: ApiResponse | None = None
        unconfirmed = False
        for index, step in enumerate(steps):
            if step.wait_evicted:
                step = await self._wait_evicted(request, target, seen, step, user, done)
            elif step.chain_rv and previous is not None:
                step = step.with_rv(str(_dig(previous.json(), "metadata", "resourceVersion") or ""))
            try:
                response = await self._send(step, job, user, request, seen.uid)
            except (ServerUnreachable, StreamBroken) as exc:
                self._audit(
                    phase="outcome", user=user, action=request.kind.value, job=job, uid=seen.uid,
                    method=step.method, path=step.path, ok=None, message=f"no answer: {exc.detail}",
                )  # fmt: skip
                return await self._settle(request, target, seen, step, f"no answer ({exc.detail})", done)
            if response.ok:
                previous = response
                done.append(self._done_text(request, target, step, response))
                if response.warnings:
                    done.append("server warning: " + "; ".join(response.warnings))
                if step.verify_phase:
                    moved, note = await self._verify_phase(target, seen, step.verify_phase)
                    unconfirmed = unconfirmed or not moved
                    done.append(note)
                continue
            status = response.status
            text = _message(response)
            partial = f" ({'; '.join(done)} before this)" if done else ""
            if status == 404:
                if step.subresource == "eviction":
                    # Either the pod is gone, or this cluster serves no Eviction for it.
                    now = await self._read(target)
                    if now is None:
                        return self._gone(request, target, seen, user)
                    steps[index + 1 : index + 1] = [self._delete_pod_step(target, seen.obj)]
                    continue
                if request.kind == ActionKind.CANCEL:
                    return self._gone(request, target, seen, user)
                raise ActionFailed(f"{target} no longer exists{partial}")
            if status == 409:
                await self._stale(request, target, seen, text, partial)
            if status == 422:
                raise ActionFailed(f"the server rejected {request.kind.value} of {target}: {text}{partial}")
            if status == 403:
                self._rules.pop(target.namespace, None)
                raise ActionForbidden(
                    f"the API server refused {step.verb} {target.resource} in {target.namespace} "
                    f"(403): {text}. "
                    "RBAC or an admission policy denies it even though it was offered; nothing more was sent "
                    f"and hpctop does not retry{partial}",
                    namespace=target.namespace,
                    kind=request.job[1],
                    action=request.kind,
                )
            if status == 429:
                if step.subresource == "eviction":
                    raise ActionFailed(
                        f"{target} cannot be evicted now: a PodDisruptionBudget blocks it ({text}); try later"
                    )
                error = response.error()
                after = (
                    f"; the server asks to wait {error.retry_after:g}s" if error and error.retry_after else ""
                )
                raise ActionFailed(
                    f"the API server is throttling requests{after}: nothing was changed{partial}"
                )
            if status >= 500:
                return await self._settle(request, target, seen, step, f"HTTP {status}: {text}", done)
            raise ActionFailed(f"{request.kind.value} of {target} failed (HTTP {status}): {text}{partial}")
        if unconfirmed:
            message = f"{target}: {request.kind.value} sent, not yet confirmed by the controller"
            return self._result(request, True, message, tuple(done))
        return self._result(request, True, f"{target} {_VERBS[request.kind]}", tuple(done))

    def _gone(self, request: ActionRequest, target: Target, seen: Seen, user: str) -> ActionResult:
        """A cancel answered 404: the job was deleted meanwhile. Said so, and recorded as such (the
        404 answer alone reads as a failure in the audit log)."""
        message = f"{target} already gone: it was deleted before the cancel arrived (HTTP 404); nothing to do"
        self._audit(
            phase="result", user=user, action=request.kind.value, job="/".join(request.job), uid=seen.uid,
            status=404, ok=True, message=message,
        )  # fmt: skip
        return self._result(request, True, message, outcome="gone")

    async def _wait_evicted(
        self, request: ActionRequest, target: Target, seen: Seen, step: Step, user: str, done: list[str]
    ) -> Step:
        """Kueue requeue's middle step: wait (bounded) until the deactivated Workload is evicted.

        Releasing earlier would only undo the hold (Kueue may not have evicted yet), so on a
        timeout hpctop stops here and says the Workload is left held: it never guesses.
        """
        started = asyncio.get_running_loop().time()
        try:
            now, reason = await self._poll(target, seen, _kueue_evicted, self.evict_timeout)
        except ActionFailed as exc:
            raise ActionFailed(f"{exc.detail} ({'; '.join(done)} before this)") from None
        if reason is None or now is None:
            message = (
                f"{target} was deactivated (spec.active=false) but Kueue did not evict it within "
                f"{self.evict_timeout:g}s; it is left held. Release it to let it run again, or requeue "
                "once Kueue has evicted it"
            )
            self._audit(
                phase="outcome", user=user, action=request.kind.value, job="/".join(request.job),
                uid=seen.uid, ok=False, message=message,
            )  # fmt: skip
            raise ActionFailed(message)
        waited = asyncio.get_running_loop().time() - started
        done.append(f"{reason} after {waited:.0f}s")
        return step.with_rv(str(_dig(now, "metadata", "resourceVersion") or ""))

    async def _verify_phase(self, target: Target, seen: Seen, moved: tuple[str, ...]) -> tuple[bool, str]:
        """After a Volcano Command: did the controller move the job's phase? (bounded wait)

        The Command's create only says the API server stored it; Volcano's controller acts on it
        later (and deletes it). A phase that does not move is reported, not retried: a second
        Command would act twice once the controller catches up.
        """
        before = _vc_phase(seen.obj) or "(none)"
        try:
            now, phase = await self._poll(
                target,
                seen,
                lambda obj: _vc_phase(obj) if _vc_phase(obj) in moved else None,
                self.phase_timeout,
            )
        except ActionFailed as exc:
            return False, f"could not confirm the phase: {exc.detail}"
        if phase is None:
            still = _vc_phase(now or {}) or "(none)"
            return False, (
                f"status.state.phase is still {still} after {self.phase_timeout:g}s: Volcano's controller "
                "has not acted on the Command yet (is vc-controller-manager running?); do not send it again"
            )
        return True, f"status.state.phase: {before} → {phase}"

    def _done_text(self, request: ActionRequest, target: Target, step: Step, response: ApiResponse) -> str:
        if step.method == "DELETE":
            return f"{target} deleted ({step.body and step.body.get('propagationPolicy')} propagation)"
        if step.subresource == "eviction":
            return f"{target} evicted"
        body = response.json()
        if step.verify_phase:
            return f"Command {_dig(body, 'action')} {_dig(body, 'metadata', 'name')} created"
        for path in (*_SPEC_ACTED, *_META_ACTED):
            value = _dig(body, *path)
            if value is not None and step.body is not None and _dig(step.body, *path) is not None:
                return f"{'.'.join(path)} = {orjson.dumps(value).decode()}"
        return f"{step.method} {step.path}: HTTP {response.status}"

    async def _stale(
        self, request: ActionRequest, target: Target, seen: Seen, text: str, partial: str
    ) -> None:
        """A 409: re-read, say what changed, and ask again with a fresh preview. Never retried."""
        now = await self._read(target)
        if now is None:
            if request.kind == ActionKind.CANCEL:
                raise StaleTarget(f"{target} is already gone{partial}", changed=("deleted",), preview=None)
            raise StaleTarget(f"{target} no longer exists{partial}", changed=("deleted",), preview=None)
        changed = diff(seen.obj, now)
        fresh = await self.preview(request)
        raise StaleTarget(
            f"{target} changed since you saw it, so nothing was done{partial}: " + "; ".join(changed)
            + f" (server: {text}). Confirm again to act on the new state.",
            changed=changed,
            preview=fresh,
        )  # fmt: skip

    async def _settle(
        self, request: ActionRequest, target: Target, seen: Seen, step: Step, why: str, done: list[str]
    ) -> ActionResult:
        """The answer was lost or a 5xx: re-read by uid and report what happened; never resend."""
        try:
            now = await self._read(target)
        except (ServerUnreachable, StreamBroken, ActionFailed) as exc:
            raise ActionFailed(
                f"outcome unknown for {request.kind.value} of {target}: {why}, and re-reading failed "
                f"({exc}); check the cluster before trying again"
            ) from None
        replaced = now is not None and _dig(now, "metadata", "uid") != seen.uid
        if step.method == "DELETE" or step.subresource == "eviction":
            if now is None or replaced or _dig(now, "metadata", "deletionTimestamp"):
                state = "gone" if now is None or replaced else "terminating"
                return self._result(
                    request,
                    True,
                    f"{target} {_VERBS[request.kind]} (confirmed by re-reading: {state}; {why})",
                )
        elif step.verify_phase:
            # A Command create whose answer was lost: only the job's phase can tell, and a phase
            # that did not move does not prove the Command was not stored (M5): never "safe to retry".
            phase = _vc_phase(now or {})
            if (
                now is not None
                and not replaced
                and phase in step.verify_phase
                and phase != _vc_phase(seen.obj)
            ):
                done.append(f"confirmed by re-reading after {why}: status.state.phase is {phase}")
                return self._result(request, True, f"{target} {_VERBS[request.kind]}", tuple(done))
            raise ActionFailed(
                f"outcome unknown for {request.kind.value} of {target}: {why}; the Command may have been "
                f"stored and not yet handled (phase {phase or '(none)'}). Check `kubectl get "
                f"commands.bus.volcano.sh -n {target.namespace}` and the job's phase before trying again"
            )
        elif now is not None and not replaced and step.body is not None:
            # what the patch sets: its spec, and the labels/annotations a priority/move patch sets
            # (the resourceVersion it carries is a precondition, not a value to find)
            meta = {
                k: v for k, v in (step.body.get("metadata") or {}).items() if k in ("labels", "annotations")
            }
            wanted = {k: v for k, v in (("spec", step.body.get("spec")), ("metadata", meta)) if v}
            if wanted and _contains(now, wanted):
                done.append(f"confirmed by re-reading after {why}")
                return self._result(request, True, f"{target} {_VERBS[request.kind]}", tuple(done))
        raise ActionFailed(
            f"{request.kind.value} of {target} did not take effect ({why}); re-reading shows it unchanged"
            + (f" after: {'; '.join(done)}" if done else "")
            + ". It is safe to try again."
        )

    # -- Kueue queues: close / open (SCHEDULERS.md §9.2) ---------------------------------------------

    @staticmethod
    def _queue_request(kind: str, name: str, namespace: str, policy: str) -> ActionRequest:
        return queue_request(kind, name, namespace, policy)

    @staticmethod
    def _queue_refusal(kind: str, name: str, namespace: str, policy: str) -> str | None:
        """Why a stopPolicy change is refused before any request is made, or None."""
        if kind not in QUEUE_KINDS:
            return f"{kind!r} is not a Kueue queue kind: stopPolicy is set on a ClusterQueue or a LocalQueue"
        if policy not in STOP_POLICIES:
            return (
                f"{policy!r} is not a Kueue stopPolicy: use Hold (admit nothing new), HoldAndDrain (also "
                "evict what is admitted) or None (open the queue)"
            )
        if not name:
            return f"a {kind} needs a name"
        if kind == "LocalQueue" and not namespace:
            return "a LocalQueue is namespaced: name its namespace"
        return None

    async def _queue_target(self, kind: str, name: str, namespace: str) -> QueueTarget | None:
        """Where the queue is served (the version the registry says Kueue serves), None without Kueue."""
        spec = (await self.registry()).spec(kind)
        if spec is None:
            return None
        return QueueTarget(kind, spec.version, namespace if kind == "LocalQueue" else "", name)

    async def _locate_queue(
        self, kind: str, name: str, namespace: str
    ) -> tuple[QueueTarget, dict[str, Any] | None]:
        """Read the queue at the version Kueue serves: (where it lives, the object or None)."""
        target = await self._queue_target(kind, name, namespace)
        if target is None:
            raise ActionRefused(_not_served(kind))
        return target, await self._read(target)

    @staticmethod
    def _queue_state_refusal(target: QueueTarget, obj: Mapping[str, Any], policy: str) -> str | None:
        current = str(_dig(obj, "spec", "stopPolicy") or "None")
        if current == policy:
            state = "open" if policy == "None" else "closed"
            return f"{target} already has spec.stopPolicy {policy} ({state}); nothing to change"
        if _dig(obj, "metadata", "deletionTimestamp"):
            return f"{target} is being deleted"
        return None

    @staticmethod
    def _queue_step(target: QueueTarget, obj: Mapping[str, Any], policy: str) -> Step:
        rv = str(_dig(obj, "metadata", "resourceVersion") or "")
        body = {"metadata": {"resourceVersion": rv}, "spec": {"stopPolicy": policy}}
        return Step("PATCH", target.path, body, "patch", KUEUE_GROUP, target.plural, content_type=MERGE_PATCH)

    @staticmethod
    def _queue_expected(target: QueueTarget, obj: Mapping[str, Any], policy: str) -> tuple[str, ...]:
        """What Kueue does once the queue's stopPolicy changes (not part of the dry run's answer)."""
        admitted = _dig(obj, "status", "admittedWorkloads")
        count = f"{admitted} " if isinstance(admitted, int) and not isinstance(admitted, bool) else ""
        scope = (
            "workloads of every LocalQueue that points at it"
            if target.kind == "ClusterQueue"
            else "workloads submitted through this LocalQueue"
        )
        if policy == "HoldAndDrain":
            return (
                f"HoldAndDrain EVICTS the {count}admitted workload(s) of {target}: Kueue deletes their pods "
                "(running work is lost unless it checkpoints) and they go back to pending",
                f"Kueue admits no new {scope} until the queue is opened again (stopPolicy None)",
            )
        if policy == "Hold":
            return (f"Kueue admits no new {scope}; the {count}admitted workload(s) keep running",)
        was = str(_dig(obj, "spec", "stopPolicy") or "None")
        return (f"Kueue admits {scope} again (was {was})",)

    async def preview_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> Preview:
        """The server's dry run of setting a Kueue queue's ``spec.stopPolicy`` ("close / open queue").

        ``kind`` is ``ClusterQueue`` (cluster-scoped: ``namespace`` is ignored) or ``LocalQueue``;
        ``policy`` is ``Hold``, ``HoldAndDrain`` (also evicts what is admitted) or ``None``. The
        queue's state is remembered so :meth:`set_queue_stop_policy` sends with its resourceVersion.
        """
        request = self._queue_request(kind, name, namespace, policy)
        refusal = self._queue_refusal(kind, name, namespace, policy)
        if refusal is not None:
            return Preview(request, False, (), refusal=refusal)
        try:
            target, obj = await self._locate_queue(kind, name, namespace)
        except ActionRefused as exc:
            return Preview(request, False, (), refusal=exc.detail)
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"cannot read {kind} {name}: {exc.detail}")
        if obj is None:
            return Preview(request, False, (), refusal=f"{target} does not exist (read at {target.version})")
        refusal = self._queue_state_refusal(target, obj, policy)
        if refusal is not None:
            return Preview(request, False, (), refusal=refusal)
        step = self._queue_step(target, obj, policy)
        described = (step.describe(),)
        if self.read_only:
            return Preview(
                request,
                False,
                (),
                refusal="read-only mode: no action is sent to the cluster",
                requests=described,
            )
        try:
            answer = await self.client.request(
                step.method, step.path, params=step.params(dry_run=True), body=step.body,
                content_type=step.content_type,
            )  # fmt: skip
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"preview failed: {exc.detail}", requests=described)
        self._seen[request] = Seen(obj, self._clock())
        expected = self._queue_expected(target, obj, policy)
        if answer.status == 400 and "dry" in _message(answer).lower():
            changes = ("server preview unavailable: " + _message(answer), *expected)
            return Preview(request, True, changes, requests=described)
        if not answer.ok:
            self._seen.pop(request, None)
            return Preview(
                request,
                False,
                (),
                refusal=f"the server would refuse this (HTTP {answer.status}): {_message(answer)}",
                requests=described,
            )
        would = answer.json()
        prefix = "server dry run: "
        dry = (
            tuple(prefix + c for c in diff(obj, would)) or (f"{prefix}accepted, no visible change",)
            if isinstance(would, dict)
            else (f"{prefix}accepted",)
        )
        return Preview(request, True, dry + expected, requests=described)

    async def set_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> ActionResult:
        """Set a Kueue queue's ``spec.stopPolicy``: a merge patch carrying the resourceVersion the
        last :meth:`preview_queue_stop_policy` saw (else that of a fresh read), ``fieldManager=hpctop``.

        Raises :class:`ActionRefused` when nothing was sent (:class:`StaleTarget` with a fresh
        preview on a 409) and :class:`ActionFailed` when the server refused or the outcome is unknown.
        """
        request = self._queue_request(kind, name, namespace, policy)
        refusal = self._queue_refusal(kind, name, namespace, policy)
        if refusal is not None:
            raise ActionRefused(refusal)
        if self.read_only:
            raise ReadOnlyViolation("read-only mode: no action is sent to the cluster")
        first = await self._queue_target(kind, name, namespace)
        if first is None:
            raise ActionRefused(_not_served(kind))
        seen = self._seen.pop(request, None)
        if seen is None:
            first, obj = await self._locate_queue(kind, name, namespace)
            if obj is None:
                raise ActionRefused(f"{first} does not exist")
            seen = Seen(obj, self._clock())
        target = first.at_version_of(seen.obj)
        refusal = self._queue_state_refusal(target, seen.obj, policy)
        if refusal is not None:
            raise ActionRefused(refusal)
        step = self._queue_step(target, seen.obj, policy)
        job = "/".join(request.job)
        action = f"stop-policy:{policy}"
        user = await self.whoami()
        allowed, reason = await self.access_review(
            "patch", KUEUE_GROUP, target.plural, target.namespace, name
        )
        if not allowed:
            where = f"in {target.namespace}" if target.namespace else "(cluster-scoped)"
            message = (
                f"not allowed: you may not patch {target.resource} {where} (SelfSubjectAccessReview"
                + (f": {reason}" if reason else "")
                + "); nothing was sent"
            )
            self._audit(
                phase="refused", user=user, action=action, job=job, uid=seen.uid, ok=False, message=message
            )
            raise ActionRefused(message)
        self._audit(
            phase="intent", user=user, action=action, job=job, uid=seen.uid, method=step.method,
            path=step.path, dry_run=False, preconditions={"resourceVersion": seen.rv},
            message=step.describe(),
        )  # fmt: skip
        try:
            response = await self._send(step, job, user, request, seen.uid, action)
        except (ServerUnreachable, StreamBroken) as exc:
            self._audit(
                phase="outcome", user=user, action=action, job=job, uid=seen.uid, method=step.method,
                path=step.path, ok=None, message=f"no answer: {exc.detail}",
            )  # fmt: skip
            return await self._settle_queue(request, target, seen, policy, f"no answer ({exc.detail})")
        before = str(_dig(seen.obj, "spec", "stopPolicy") or "None")
        if response.ok:
            now = _dig(response.json(), "spec", "stopPolicy") or policy
            changes = [f"spec.stopPolicy = {orjson.dumps(now).decode()}"]
            if response.warnings:
                changes.append("server warning: " + "; ".join(response.warnings))
            changes.extend(self._queue_expected(target, seen.obj, policy))
            return self._result(request, True, f"{target}: stopPolicy {before} → {policy}", tuple(changes))
        status = response.status
        text = _message(response)
        if status == 404:
            raise ActionFailed(f"{target} no longer exists")
        if status == 409:
            now_obj = await self._read(target)
            if now_obj is None:
                raise StaleTarget(f"{target} no longer exists", changed=("deleted",), preview=None)
            changed = diff(seen.obj, now_obj)
            fresh = await self.preview_queue_stop_policy(kind, name, namespace, policy)
            raise StaleTarget(
                f"{target} changed since you saw it, so nothing was done: " + "; ".join(changed)
                + f" (server: {text}). Confirm again to act on the new state.",
                changed=changed,
                preview=fresh,
            )  # fmt: skip
        if status == 422:
            raise ActionFailed(f"the server rejected stopPolicy {policy} on {target}: {text}")
        if status == 403:
            if target.namespace:
                self._rules.pop(target.namespace, None)
            else:  # a cluster-scoped grant shows in every namespace's rules review
                self._rules.clear()
            where = f"in {target.namespace}" if target.namespace else "(cluster-scoped)"
            raise ActionForbidden(
                f"the API server refused patch {target.resource} {where} (403): {text}. "
                f"Closing or opening a queue needs RBAC patch on {target.resource}; RBAC or an "
                "admission policy denies it even though it was offered; nothing more was sent and "
                "hpctop does not retry",
                namespace=request.job[0],
                kind=kind,
                action=request.kind,
            )
        if status == 429:
            error = response.error()
            after = f"; the server asks to wait {error.retry_after:g}s" if error and error.retry_after else ""
            raise ActionFailed(f"the API server is throttling requests{after}: nothing was changed")
        if status >= 500:
            return await self._settle_queue(request, target, seen, policy, f"HTTP {status}: {text}")
        raise ActionFailed(f"stopPolicy {policy} on {target} failed (HTTP {status}): {text}")

    async def _settle_queue(
        self, request: ActionRequest, target: QueueTarget, seen: Seen, policy: str, why: str
    ) -> ActionResult:
        """The answer was lost or a 5xx: re-read by uid and report what happened; never resend."""
        try:
            now = await self._read(target)
        except (ServerUnreachable, StreamBroken, ActionFailed) as exc:
            raise ActionFailed(
                f"outcome unknown for stopPolicy {policy} on {target}: {why}, and re-reading failed ({exc}); "
                "check the cluster before trying again"
            ) from None
        if (
            now is not None
            and _dig(now, "metadata", "uid") == seen.uid
            and str(_dig(now, "spec", "stopPolicy") or "None") == policy
        ):
            return self._result(
                request, True, f"{target}: stopPolicy {policy}", (f"confirmed by re-reading after {why}",)
            )
        raise ActionFailed(
            f"stopPolicy {policy} on {target} did not take effect ({why}); re-reading shows it unchanged. "
            "It is safe to try again."
        )

    async def execute_many(self, requests: Sequence[ActionRequest]) -> list[ActionResult]:
        """A bulk action, reported per job: one failure does not stop the others."""
        results: list[ActionResult] = []
        for request in requests:
            try:
                results.append(await self.execute(request))
            except HpctopError as exc:
                results.append(self._result(request, False, exc.detail))
        return results


#: kind → (group, plural), whatever version is served: what an RBAC rule names (from the one table)
_WHERE: dict[str, tuple[str, str]] = {
    **{
        spec.kind: (spec.group, spec.plural)
        for spec in (*BUILTIN_RESOURCES, *(s for a in OPTIONAL_RESOURCES for s in a), *kueue_resources())
    },
    **{bare: (KUEUE_GROUP, plural) for bare, (plural, _) in QUEUE_KINDS.items()},
    "Workload": (KUEUE_GROUP, "workloads"),
}

_VERBS = {
    ActionKind.CANCEL: "cancelled",
    ActionKind.HOLD: "held",
    ActionKind.RELEASE: "released",
    ActionKind.REQUEUE: "requeued",
    ActionKind.PRIORITY: "priority changed",
    ActionKind.MOVE: "moved",
}


def _review(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    group = "authentication.k8s.io" if kind == "SelfSubjectReview" else "authorization.k8s.io"
    return {"apiVersion": f"{group}/v1", "kind": kind, "spec": spec}


def _reprioritize_refusal(
    action: ActionKind, target: Target, obj: Mapping[str, Any], value: str | int | None
) -> str | None:
    """Whether priority/move is possible on this object (SCHEDULERS.md §5.6, §8.6, §9.2).

    A Kueue job's queue and priority class are labels on the owner job (the webhook allows a
    change only while it is suspended, i.e. pending), and a Workload's ``spec.priority`` is a
    number, changeable while pending. Anything else keeps the immutable-pod-priority refusal.
    """
    what = "priority" if action == ActionKind.PRIORITY else "queue"
    finished = _finished(obj)
    if target.kind == "Workload":
        if action != ActionKind.PRIORITY:
            return "move a Kueue job by its owner job's queue-name label"
        if not isinstance(value, int) or isinstance(value, bool):
            return (
                f"a Workload's spec.priority is a number; {value!r} is not, and a WorkloadPriorityClass "
                f"name needs an owner job to carry the {KUEUE_PRIORITY_LABEL} label (this one has none)"
            )
        admitted = _kueue_admitted(obj)
        if admitted:
            return (
                f"{target} is no longer pending ({admitted}): Kueue changes a Workload's priority only while "
                "it waits (a running one keeps its admission; kueue#7138)"
            )
        return None
    if finished:
        return f"{target} has finished ({finished}); there is nothing to re-{what}"
    labels = _dig(obj, "metadata", "labels") or {}
    if KUEUE_QUEUE_LABEL in labels:
        if not isinstance(value, str) or not value:
            noun = "WorkloadPriorityClass" if action == ActionKind.PRIORITY else "LocalQueue"
            return f"a Kueue job's {what} is the name of a {noun}; {value!r} is not one" + (
                " (a number goes on the Workload's spec.priority)" if action == ActionKind.PRIORITY else ""
            )
        suspend_path = SUSPEND_FIELD.get(target.kind)
        if suspend_path is None or not _dig(obj, *suspend_path):
            return (
                f"{target} is admitted by Kueue (not suspended): Kueue's webhook allows changing its "
                f"{'priority class' if action == ActionKind.PRIORITY else 'queue'} only while the job is "
                "suspended (pending); hold its Workload first"
            )
        if action == ActionKind.MOVE and labels.get(KUEUE_QUEUE_LABEL) == value:
            return f"{target} is already in LocalQueue {value}"
        return None
    return PRIORITY_REFUSAL if action == ActionKind.PRIORITY else MOVE_REFUSAL


def _slinky_request(request: ActionRequest) -> bool:
    return request.scheduler == SLINKY_SCHEDULER and request.job[1] in SLINKY_KINDS


def _is_slinky(obj: Mapping[str, Any]) -> bool:
    """Whether slurm-bridge schedules this workload: one of its annotations, or its pods name it."""
    annotations = _dig(obj, "metadata", "annotations") or {}
    if any(str(k).startswith(SLINKY_PREFIX) for k in annotations):
        return True

    def names_it(node: Any) -> bool:
        if isinstance(node, dict):
            return node.get("schedulerName") == SLINKY_SCHEDULER or any(names_it(v) for v in node.values())
        if isinstance(node, list):
            return any(names_it(v) for v in node)
        return False

    return names_it(obj.get("spec"))


def _slinky_started(obj: Mapping[str, Any]) -> str | None:
    """Why a Slinky workload's Slurm job is no longer pending, or None."""
    if _dig(obj, "spec", "nodeName") or _dig(obj, "metadata", "annotations", SLINKY_NODE):
        return "its pod is bound to a node"
    for counter in ("ready", "readyReplicas", "succeeded"):
        value = _dig(obj, "status", counter)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return f"status.{counter} is {value}"
    for child in _dig(obj, "status", "replicatedJobsStatus") or []:
        if isinstance(child, dict) and isinstance(child.get("ready"), int) and child["ready"] > 0:
            return "a replicated job has ready pods"
    return None


def _slinky_refusal(
    action: ActionKind, target: Target, obj: Mapping[str, Any], value: str | int | None
) -> str | None:
    """Whether a Slinky priority/partition change can be sent (SCHEDULERS.md §8.6, §9.2)."""
    if not _is_slinky(obj):
        return (
            f"{target} is not scheduled by Slinky (no {SLINKY_PREFIX}* annotation, no schedulerName "
            f"{SLINKY_SCHEDULER}): " + (PRIORITY_REFUSAL if action == ActionKind.PRIORITY else MOVE_REFUSAL)
        )
    finished = _finished(obj)
    if finished:
        return f"{target} has finished ({finished}); there is nothing to change"
    started = _slinky_started(obj)
    if started:
        return (
            f"{target} is running ({started}): Slurm changes a job's "
            f"{'priority' if action == ActionKind.PRIORITY else 'partition'} only while it is pending"
        )
    if action == ActionKind.PRIORITY:
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(text, str) or not text.isdigit():
            return f"a Slurm job's priority is a whole number of 0 or more; {value!r} is not one"
        return None
    if not isinstance(value, str) or not all(value.split(",")):
        return f"a Slurm partition is a name (or a comma-separated list); {value!r} is not one"
    if _dig(obj, "metadata", "annotations", SLINKY_PARTITION) == value:
        return f"{target} already asks for partition {value}"
    return None


def _not_served(kind: str) -> str:
    spec = _WHERE.get(kind)
    what = f"{spec[1]}.{spec[0]}" if spec is not None and spec[0] else kind
    return (
        f"this cluster does not serve {what}: its discovery (/apis) lists no such resource at a version "
        "hpctop understands, so nothing is sent"
    )


def _unknown_kind(action: ActionKind, kind: str) -> str:
    if kind.startswith("PodGroup."):
        return (
            f"{action.value} of a {kind} is not supported: a PodGroup is the gang of a job; act on the job "
            "that owns it (a vcjob, a Job, a JobSet, ...)"
        )
    known = ", ".join(sorted(KINDS))
    return (
        f"{action.value} of a {kind} is not supported on a live cluster: hpctop has no request for that "
        f"kind (it acts on: {known})"
    )


def _volcano_refusal(action: ActionKind, target: Target, obj: Mapping[str, Any]) -> str | None:
    """What a vcjob's phase (``status.state.phase``) allows: Volcano's state machine ignores a
    Command its current state does not handle, so hpctop refuses it instead of sending it."""
    phase = _vc_phase(obj)
    if action == ActionKind.CANCEL:
        return None
    if phase in VOLCANO_FINISHED:
        return f"{target} has finished (phase {phase}); there is nothing to {action.value}"
    if action == ActionKind.PRIORITY:
        if phase not in ("", "Pending"):
            return (
                f"{target} is {phase}: a Volcano job's priority can be changed only while it is Pending "
                "(its pods are already created with the old priority)"
            )
        return None
    if action == ActionKind.HOLD and phase in ("Aborting", "Aborted"):
        return f"{target} is already held (phase {phase})"
    if action == ActionKind.RELEASE and phase != "Aborted":
        if phase == "Aborting":
            return f"{target} is still aborting; release it once its phase is Aborted"
        return f"{target} is not held (phase {phase or '(none)'}; ResumeJob acts only on an Aborted job)"
    if action == ActionKind.REQUEUE:
        if phase in ("Aborting", "Aborted"):
            return f"{target} is held (phase {phase}); release it instead of requeueing"
        if phase == "Restarting":
            return f"{target} is already restarting"
    return None


def _expected_backend(action: ActionKind, target: Target, obj: Mapping[str, Any]) -> tuple[str, ...]:
    """What the backends' controllers do after the request (not part of any dry run's answer)."""
    kind = target.kind
    if kind == "JobSet":
        if action == ActionKind.CANCEL:
            return ("its child Jobs and their pods are deleted by the garbage collector",)
        if action in (ActionKind.HOLD, ActionKind.REQUEUE):
            notes = ["the JobSet controller suspends its child Jobs, which deletes their pods"]
            if action == ActionKind.REQUEUE:
                notes.append("then spec.suspend is set back to false: same name and uid, pods recreated")
            return tuple(notes)
        return ("the JobSet controller resumes its child Jobs",)
    if kind in KUBEFLOW_PLURALS:
        if action == ActionKind.CANCEL:
            return ("its pods and services are deleted by the garbage collector",)
        if action in (ActionKind.HOLD, ActionKind.REQUEUE):
            return ("the training operator deletes its pods (needs training-operator >= 1.7 for suspend)",)
        return ("the training operator creates its pods again",)
    if kind == VOLCANO_JOB:
        if action == ActionKind.CANCEL:
            return ("its pods and PodGroup are deleted by the garbage collector",)
        if action == ActionKind.PRIORITY:
            return ("its PodGroup should follow the new priority class (not verified by hpctop)",)
        action_name = VOLCANO_COMMANDS.get(action, "")
        return (
            f"Volcano's controller runs {action_name} and deletes the Command; hpctop then checks that "
            f"status.state.phase moves to {' or '.join(VOLCANO_MOVED.get(action_name, ()))}",
        )
    if kind == COSCHED_PODGROUP and action == ActionKind.CANCEL:
        owners = [r for r in _dig(obj, "metadata", "ownerReferences") or [] if isinstance(r, dict)]
        if not owners:
            return (
                "the PodGroup has no owner: its pods (label scheduling.x-k8s.io/pod-group) are not deleted",
            )
        return ("its owner is deleted first (its pods go with it), then the PodGroup",)
    if action in (ActionKind.PRIORITY, ActionKind.MOVE) and kind != VOLCANO_JOB:
        if kind == "Workload":
            return ("Kueue re-sorts its queue by the new priority (pod priority is unchanged)",)
        if action == ActionKind.MOVE:
            return ("Kueue recreates the Workload in the new LocalQueue",)
        return ("Kueue propagates the class to the Workload (version-dependent, §5.6)",)
    if kind == "LeaderWorkerSet":
        if action == ActionKind.CANCEL:
            return ("this is a service (LeaderWorkerSet): its StatefulSets and pods are deleted too",)
        if action == ActionKind.HOLD:
            return (f"the old replica count is kept in the {HELD_ANNOTATION} annotation",)
    return ()


def _needs(action: ActionKind, kind: str) -> list[tuple[str, str, str, str]] | str:
    """The RBAC (verb, group, resource, subresource) an action needs, or why it is never offered."""
    if kind == YUNIKORN_QUEUE:
        if action == ActionKind.PRIORITY:  # priority offset and quota: queues.yaml in a ConfigMap
            return [("patch", "", "configmaps", "")]
        return "a YuniKorn queue's priority offset and quota are changed (e); it has no other action"
    if kind in QUEUE_KINDS:
        if action in (ActionKind.HOLD, ActionKind.RELEASE):  # close / open: spec.stopPolicy
            return [("patch", KUEUE_GROUP, QUEUE_KINDS[kind][0], "")]
        return (
            f"a Kueue {kind} is closed (hold) or opened (release) through its spec.stopPolicy; nothing else"
        )
    spec = _WHERE.get(kind)
    if spec is None or kind not in KINDS:
        return _unknown_kind(action, kind)
    if action == ActionKind.PRIORITY and kind not in REPRIORITIZABLE:
        return PRIORITY_REFUSAL
    if action == ActionKind.MOVE and kind not in (*SUSPEND_FIELD, "LeaderWorkerSet"):
        if kind == "Workload":
            return "move a Kueue job by its owner job's queue-name label"
        return VOLCANO_MOVE_REFUSAL if kind == VOLCANO_JOB else MOVE_REFUSAL
    group, plural = spec
    if kind == COSCHED_PODGROUP:
        if action == ActionKind.CANCEL:
            return [("delete", group, plural, "")]
        if action in (ActionKind.PRIORITY, ActionKind.MOVE):
            return "a coscheduling PodGroup has no priority or queue of its own"
        return "hold/release/requeue act on the PodGroup's owner job (its suspend field)"
    if kind == "Pod":
        return (
            [("create", "", "pods", "eviction")]
            if action == ActionKind.CANCEL
            else "a bare pod cannot be held, re-prioritized or moved (a SUNK pod: Slurm side only)"
        )
    if kind == "Workload" and action == ActionKind.CANCEL:
        return "not for a Kueue Workload: act on its owner job"
    if kind in SCALED_KINDS and action == ActionKind.REQUEUE:
        return f"requeue of a {kind} is not supported: hold, then release"
    if action == ActionKind.CANCEL:
        return [("delete", group, plural, "")]
    if kind == VOLCANO_JOB and action in VOLCANO_COMMANDS:
        return [("create", COMMAND_GROUP, "commands", "")]
    return [("patch", group, plural, "")]


def _rule_grants(rule: Mapping[str, Any], verb: str, group: str, resource: str, sub: str) -> bool:
    verbs = rule.get("verbs") or []
    groups = rule.get("apiGroups") or []
    resources = rule.get("resources") or []
    if "*" not in verbs and verb not in verbs:
        return False
    if "*" not in groups and group not in groups:
        return False
    full = f"{resource}/{sub}" if sub else resource
    return any(r in ("*", full) or (sub and r in (f"{resource}/*", f"*/{sub}")) for r in resources)


# -- gang binding --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Assignment:
    """One gang member and the node it goes to; uid (and RV) become the Binding's preconditions."""

    namespace: str
    name: str
    uid: str
    node: str
    resource_version: str = ""

    @classmethod
    def of(cls, pod: Pod, node: str) -> Assignment:
        return cls(pod.namespace, pod.name, pod.uid, node, pod.resource_version)

    @property
    def path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods/{self.name}"


@dataclass(frozen=True, slots=True)
class BindOutcome:
    assignment: Assignment
    #: bound | failed | not-tried | rolled-back | stranded
    state: str
    status: int | None = None
    message: str = ""
    audit_id: str | None = None


@dataclass(frozen=True, slots=True)
class GangBindResult:
    outcomes: tuple[BindOutcome, ...]

    @property
    def ok(self) -> bool:
        return all(o.state == "bound" for o in self.outcomes)

    @property
    def stranded(self) -> tuple[BindOutcome, ...]:
        """Members left bound after a failed gang (their rollback delete failed too)."""
        return tuple(o for o in self.outcomes if o.state == "stranded")

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for outcome in self.outcomes:
            counts[outcome.state] = counts.get(outcome.state, 0) + 1
        return ", ".join(f"{n} {state}" for state, n in counts.items())


@dataclass
class _BindTry:
    retries: int = 0
    notes: list[str] = field(default_factory=list)


async def _bind_one(
    client: KubeClient, a: Assignment, *, max_retries: int, sleep: Callable[[float], Awaitable[None]]
) -> BindOutcome:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": a.name, "namespace": a.namespace, "uid": a.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": a.node},
    }
    if a.resource_version:
        body["metadata"]["resourceVersion"] = a.resource_version
    attempt = _BindTry()
    while True:
        try:
            response = await client.request(
                "POST", a.path + "/binding", params={"fieldManager": FIELD_MANAGER}, body=body
            )
        except (ServerUnreachable, StreamBroken) as exc:
            response = None
            why = exc.detail
        if response is not None and response.ok:
            return BindOutcome(a, "bound", response.status, audit_id=response.audit_id)
        if response is not None and response.status == 429 and attempt.retries < max_retries:
            error = response.error()
            attempt.retries += 1
            await sleep(min(error.retry_after if error and error.retry_after else 1.0, 5.0))
            continue
        if response is not None and response.status < 500 and response.status != 409:
            return BindOutcome(a, "failed", response.status, _message(response), response.audit_id)
        # 409 (already bound: maybe our own earlier try), 5xx or no answer: the outcome is decided
        # by re-reading the pod by uid, never by sending the Binding again blindly (M5).
        if response is not None:
            why = f"HTTP {response.status}: {_message(response)}"
        read = await client.request("GET", a.path)
        pod = read.json() if read.ok else None
        if isinstance(pod, dict) and _dig(pod, "metadata", "uid") == a.uid:
            bound_to = _dig(pod, "spec", "nodeName")
            if bound_to == a.node:
                return BindOutcome(a, "bound", response.status if response else None, f"confirmed ({why})")
            if bound_to:
                return BindOutcome(
                    a, "failed", response.status if response else None, f"already bound to {bound_to} ({why})"
                )
            if response is not None and response.status != 409 and attempt.retries < max_retries:
                attempt.retries += 1  # a transient 5xx, and the pod is still unbound: safe to try again
                await sleep(0.5)
                continue
        elif read.status == 404 or isinstance(pod, dict):
            return BindOutcome(
                a, "failed", response.status if response else None, f"pod gone or replaced ({why})"
            )
        return BindOutcome(a, "failed", response.status if response else None, why)


async def bind_gang(
    client: KubeClient,
    assignments: Sequence[Assignment],
    *,
    max_retries: int = 2,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> GangBindResult:
    """Bind a gang's pods all-or-none, as far as the API allows.

    The API server has no multi-object transaction: a gang bind is N Binding creates
    (``POST pods/{n}/binding``), each carrying the pod's uid (and RV) as preconditions, so a pod
    recreated under the same name is never bound by accident. The rule:

    1. Bind the members one by one, in order. Transient errors (429, 5xx, no answer) are settled by
       re-reading the pod by uid (bound to our node = success) and retried at most ``max_retries``
       times while the pod is still unbound; a 409 (bound elsewhere, or a new uid) is final.
    2. On the first member that fails, stop: the rest are not bound ("not-tried").
    3. A bound pod cannot be unbound (``spec.nodeName`` is immutable), so every member bound so
       far is **deleted** (uid precondition, ``gracePeriodSeconds: 0``, Background): its
       controller (Job, JobSet, ...) recreates it unbound and the gang is scheduled again later.
       Gang members must therefore be controller-owned; a bare pod would be lost.
    4. A member whose rollback delete fails is reported "stranded": bound, with the gang broken.

    Returns the outcome per member; ``ok`` only when all are bound.
    """
    outcomes: list[BindOutcome] = []
    failed_at: int | None = None
    for index, a in enumerate(assignments):
        outcome = await _bind_one(client, a, max_retries=max_retries, sleep=sleep)
        outcomes.append(outcome)
        if outcome.state != "bound":
            failed_at = index
            break
    if failed_at is None:
        return GangBindResult(tuple(outcomes))
    final: list[BindOutcome] = []
    for outcome in outcomes[:failed_at]:
        final.append(await _roll_back(client, outcome))
    final.append(outcomes[failed_at])
    final.extend(BindOutcome(a, "not-tried") for a in assignments[failed_at + 1 :])
    return GangBindResult(tuple(final))


async def _roll_back(client: KubeClient, outcome: BindOutcome) -> BindOutcome:
    a = outcome.assignment
    options = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Background",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": a.uid},
    }
    try:
        response = await client.request("DELETE", a.path, body=options)
    except (ServerUnreachable, StreamBroken) as exc:
        return BindOutcome(a, "stranded", None, f"bound; rollback delete got no answer ({exc.detail})")
    if response.ok or response.status == 404:
        return BindOutcome(
            a, "rolled-back", response.status, "deleted so its controller recreates it unbound"
        )
    return BindOutcome(a, "stranded", response.status, f"bound; rollback delete failed: {_message(response)}")


__all__ = [
    "FIELD_MANAGER",
    "HELD_ANNOTATION",
    "ActionForbidden",
    "Assignment",
    "BindOutcome",
    "GangBindResult",
    "KubeActions",
    "Permission",
    "QueueTarget",
    "StaleTarget",
    "Step",
    "Target",
    "bind_gang",
    "diff",
    "summarize",
]
