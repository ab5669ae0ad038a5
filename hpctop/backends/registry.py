"""The registered backends, and the tables every layer used to hard-code, built from them.

Why: the decoder (which kinds it decodes), the store (which kinds are backend objects, how their
evidence becomes a job's state, reasons and queue), discovery (which groups and versions to look
for) and the resource tables (what a live session watches) all come from :data:`BACKENDS`, so a
backend is added by adding its folder and one line here (see ``hpctop/backends/__init__.py``).

The order of :data:`BACKENDS` is meaningful: it is the order of the watch list after the core
(what the console's status shows), and the order in which backends are asked about a job (the
first with a say on its state wins: a Kueue Workload before a PodGroup).

Nothing here imports an ``act`` module: a backend names its action plans by module path
(``Backend.actions``), which the actions layer imports; the read side stays below the actions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hpctop.backends.contract import (
    Backend,
    Decoder,
    QueuePlace,
    ResourceSpec,
    Selection,
    ServedApis,
)
from hpctop.backends.coscheduling.read import BACKEND as COSCHEDULING
from hpctop.backends.dra.read import BACKEND as DRA
from hpctop.backends.jobset.read import BACKEND as JOBSET
from hpctop.backends.kai.read import BACKEND as KAI
from hpctop.backends.kube_scheduler.read import BACKEND as KUBE_SCHEDULER
from hpctop.backends.kubeflow.read import BACKEND as KUBEFLOW
from hpctop.backends.kueue.read import BACKEND as KUEUE
from hpctop.backends.lws.read import BACKEND as LWS
from hpctop.backends.slinky.read import BACKEND as SLINKY
from hpctop.backends.slurm.read import BACKEND as SLURM
from hpctop.backends.volcano.read import BACKEND as VOLCANO
from hpctop.backends.workload_api.read import BACKEND as WORKLOAD_API
from hpctop.backends.yunikorn.read import BACKEND as YUNIKORN
from hpctop.model.backends.evidence import JobEvidence, queue_reason
from hpctop.model.backends.queues import QueueIndex
from hpctop.model.backends.wire import split_kind
from hpctop.model.objects import QueueInfo, Reason
from hpctop.model.states import JobState

#: every backend hpctop reads, in watch-list order (the core first)
BACKENDS: tuple[Backend, ...] = (
    KUBE_SCHEDULER,
    KUEUE,
    KAI,  # before Volcano: a KAI PodGroup is placed in KAI's queues, not looked up as a Volcano one
    VOLCANO,
    COSCHEDULING,
    JOBSET,
    LWS,
    KUBEFLOW,
    YUNIKORN,
    SLINKY,
    SLURM,
    DRA,
    WORKLOAD_API,
)


def backend(name: str) -> Backend:
    """The registered backend called ``name``; KeyError when there is none."""
    for b in BACKENDS:
        if b.name == name:
            return b
    raise KeyError(name)


# -- what is watched -----------------------------------------------------------------------------

_CORE = tuple(b for b in BACKENDS if b.builtin)
_DISCOVERED = tuple(b for b in BACKENDS if not b.builtin)
#: the core API's resources a session watches, served by every API server (never discovered)
CORE_RESOURCES: tuple[ResourceSpec, ...] = tuple(a[0] for b in _CORE for a in b.watches)
#: the core resources hpctop only writes (YuniKorn's queues.yaml ConfigMap)
CORE_WRITES: tuple[ResourceSpec, ...] = tuple(spec for b in _CORE for spec in b.writes)

#: API group → the backend name its presence reveals
DETECTED_GROUPS: Mapping[str, str] = {g: name for b in _DISCOVERED for g, name in b.detects.items()}


def select(apis: ServedApis) -> Selection:
    """What to watch beyond the core on a cluster serving ``apis``: every backend's choice, in order."""
    chosen: list[ResourceSpec] = []
    versions: dict[str, str] = {}
    for b in _DISCOVERED:
        picked = b.choose(apis)
        chosen.extend(picked.resources)
        for group, version in picked.versions.items():
            versions.setdefault(group, version)
    return Selection(tuple(chosen), versions)


def write_only(apis: ServedApis) -> tuple[ResourceSpec, ...]:
    """The resources hpctop writes but does not watch that ``apis`` serves (Volcano's Commands)."""
    return tuple(spec for b in _DISCOVERED for spec in b.writes if apis.available(spec))


def understood_versions() -> dict[str, tuple[str, ...]]:
    """group → the versions hpctop can read or write there (whose resource lists are worth a request)."""
    out: dict[str, list[str]] = {}
    for b in _DISCOVERED:
        for group, versions in b.api_versions.items():
            known = out.setdefault(group, [])
            known.extend(v for v in versions if v not in known)
    return {group: tuple(versions) for group, versions in out.items()}


# -- how it decodes ------------------------------------------------------------------------------


def _decoders() -> dict[str, Decoder]:
    out: dict[str, Decoder] = {}
    for b in BACKENDS:
        for kind, decoder in b.decoders.items():
            if kind in out:
                raise ValueError(f"two backends decode {kind!r}")  # a registration error, at import
            out[kind] = decoder
    return out


#: decoder key (the model's kind) → (its Struct, its projection), every backend's
DECODERS: Mapping[str, Decoder] = _decoders()
#: the bare kinds the actions and the console key jobs and queues by → the decoder key
ALIASES: Mapping[str, str] = {bare: kind for b in BACKENDS for bare, kind in b.aliases.items()}
#: decoder key → the (group, kind) its objects carry in their store key, for backend objects
OBJECT_KINDS: Mapping[str, tuple[str, str]] = {
    kind: split_kind(kind) for b in BACKENDS for kind in sorted(b.object_kinds)
}


# -- how evidence becomes state, reasons and queue -------------------------------------------------

_STATE_HOOKS = tuple(b.job_state for b in BACKENDS if b.job_state is not None)
_REASON_HOOKS = tuple(b.job_reasons for b in BACKENDS if b.job_reasons is not None)
_FOLDS = tuple(b.fold_queues for b in BACKENDS if b.fold_queues is not None)
_SHAPES = tuple(b.queue_shape for b in BACKENDS if b.queue_shape is not None)
_PLACES = tuple(b.place_in_queue for b in BACKENDS if b.place_in_queue is not None)


def job_state(ev: JobEvidence, state: JobState, bound: bool) -> JobState:
    """The job's state once the backends' evidence is weighed against what the pods say.

    ``bound``: some live member is on a node. The first backend with a say decides.
    """
    for hook in _STATE_HOOKS:
        found = hook(ev, state, bound)
        if found is not None:
            return found
    return state


def job_reasons(ev: JobEvidence, state: JobState, live_members: int) -> list[Reason]:
    """Every reason the backends give for a waiting (or starting) job, unordered.

    Where no backend has a say, the queue the job sits in may still explain it (a closed
    YuniKorn or Volcano queue named by the owner).
    """
    out: list[Reason] = []
    said = False
    for hook in _REASON_HOOKS:
        found = hook(ev, state, live_members)
        if found is not None:
            said = True
            out.extend(found)
    if not said:
        info = ev.queue_info
        held = queue_reason(info, f"{info.backend if info else ''}:Queue.state")
        if held is not None:
            out.append(held)
    return out


def build_queues(objects: Iterable[object], rest_queues: Iterable[QueueInfo] = ()) -> QueueIndex:
    """The neutral queue tree from backend objects (any order) and REST queue trees (YuniKorn)."""
    items = list(objects)
    out: dict[str, QueueInfo] = {}
    lookups: dict[str, Mapping[Any, str]] = {}
    for fold in _FOLDS:
        lookups.update(fold(items, out))
    for info in rest_queues:
        out[info.path] = info
    return QueueIndex(dict(sorted(out.items())), lookups)


def queue_shape(obj: object) -> tuple[object, ...] | None:
    """What of a queue object moves a job's queue path or QueueHeld reason (None: not a queue)."""
    if obj is None:
        return None
    for hook in _SHAPES:
        found = hook(obj)
        if found is not None:
            return found
    return None


def place_in_queue(ev: JobEvidence, queue_name: str | None, index: QueueIndex) -> QueuePlace | None:
    """Where the job waits, by the first backend that places it (None: none does)."""
    for hook in _PLACES:
        found = hook(ev, queue_name, index)
        if found is not None:
            return found
    return None


__all__ = [
    "ALIASES",
    "BACKENDS",
    "CORE_RESOURCES",
    "CORE_WRITES",
    "DECODERS",
    "DETECTED_GROUPS",
    "OBJECT_KINDS",
    "backend",
    "build_queues",
    "job_reasons",
    "job_state",
    "place_in_queue",
    "queue_shape",
    "select",
    "understood_versions",
    "write_only",
]
