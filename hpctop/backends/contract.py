"""What a backend declares: the types every ``hpctop/backends/<name>/read.py`` fills in.

Why a module of its own: the registry (:mod:`hpctop.backends.registry`), the decoder, the store,
discovery and the tests all read a backend through one descriptor, :class:`Backend`, instead of
the half-dozen hard-coded tables that named each scheduler (a resource table, a decoder table, a
store-kind table, a discovery group table, the evidence and queue functions). This module holds
only neutral types and the default version choice; it imports the model and nothing above it, so
a backend's read side can import it (see ``hpctop/backends/__init__.py`` for the contract).

:class:`ResourceSpec` lives here (re-exported by :mod:`hpctop.sources.kube.resources`) because a
backend's read side declares what it watches and must not import :mod:`hpctop.sources`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from hpctop.model.backends.evidence import JobEvidence
from hpctop.model.backends.queues import QueueIndex
from hpctop.model.objects import QueueInfo, Reason
from hpctop.model.states import JobState, ReasonCode


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """Where one kind lives on an API server: group, version, plural (as in the URL).

    ``kind`` is the model's name for it (what :func:`hpctop.model.decode.decode_event` is keyed
    by): a bare kind for the core and for kinds no other API group defines, ``Kind.group``
    otherwise (``PodGroup.scheduling.volcano.sh``). Items of a list response carry no
    ``kind``/``apiVersion``, so the reflector stamps them from here before decoding.
    """

    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None) -> str:
        """The collection URL path, cluster-wide or in one namespace (for namespaced kinds)."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


#: a projection: the decoded Struct and the apiVersion a list item lacks → the model object
Projection = Callable[[Any, str], Any]
#: one kind's decoder: its msgspec Struct (only the fields hpctop reads) and its projection
Decoder = tuple[type[msgspec.Struct], Projection]


@dataclass(frozen=True, slots=True)
class ServedApis:
    """What discovery found: the versions each group serves, and each version's resources where known."""

    served: Mapping[str, tuple[str, ...]]
    #: groupVersion → resource plurals; absent where the server did not say (classic discovery)
    plurals: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def versions(self, group: str) -> tuple[str, ...]:
        return self.served.get(group, ())

    def listed(self, spec: ResourceSpec) -> frozenset[str] | None:
        """The plurals served at ``spec``'s groupVersion, or None where unknown."""
        return self.plurals.get(spec.api_version)

    def available(self, spec: ResourceSpec) -> bool:
        """``spec``'s version is served and (where known) lists its plural."""
        if spec.version not in self.served.get(spec.group, ()):
            return False
        listed = self.plurals.get(spec.api_version)
        return listed is None or spec.plural in listed


@dataclass(frozen=True, slots=True)
class Selection:
    """A backend's answer to discovery: the resources to watch, and the version read per group."""

    resources: tuple[ResourceSpec, ...] = ()
    versions: Mapping[str, str] = field(default_factory=dict)


def first_served(watches: Iterable[tuple[ResourceSpec, ...]], apis: ServedApis) -> Selection:
    """The default choice: for each kind, the first of its versions (preferred first) that is served."""
    chosen: list[ResourceSpec] = []
    versions: dict[str, str] = {}
    for alternatives in watches:
        for spec in alternatives:
            if apis.available(spec):
                chosen.append(spec)
                versions.setdefault(spec.group, spec.version)
                break
    return Selection(tuple(chosen), versions)


#: evidence, the state the pods give, whether a live member is bound → the backend's state, or
#: None when this backend has no say about the job (the first backend with a say wins)
StateHook = Callable[[JobEvidence, JobState, bool], JobState | None]
#: evidence, the job's state, its live member count → this backend's reasons, or None when the
#: backend has nothing to say (no backend with a say: the queue's own state may explain the wait)
ReasonHook = Callable[[JobEvidence, JobState, int], list[Reason] | None]
#: every backend object in the store, the neutral tree being built → this backend's lookups
#: (name → queue path tables, by lookup name), after adding its queues to the tree
QueueFold = Callable[[Iterable[object], dict[str, QueueInfo]], Mapping[str, Mapping[Any, str]]]
#: a queue object → what of it moves a job's queue path or QueueHeld reason (None: not this
#: backend's object)
QueueShape = Callable[[object], tuple[object, ...] | None]


@dataclass(frozen=True, slots=True)
class QueuePlace:
    """Where a job waits: its queue path (None when unknown yet) and the LocalQueue-like entry."""

    path: str | None
    local: QueueInfo | None = None


#: the job's evidence so far (its queue fields not yet set), the queue name its gang or owner
#: gives (or None), the neutral tree → where the job waits, or None when this backend does not
#: place it (the first backend that places it wins)
PlaceHook = Callable[[JobEvidence, str | None, QueueIndex], QueuePlace | None]


@dataclass(frozen=True, slots=True)
class Backend:
    """One backend's descriptor: what it watches, decodes, explains, and how it is acted on.

    Only ``name`` … ``reasons`` and one of ``actions``/``read_only`` are required; every hook is
    optional (a backend that adds only owner kinds, like JobSet, declares no hooks).
    """

    #: short, lower-case, as in ``Job.backends`` and discovery's backend set (``kueue``)
    name: str
    #: what a person calls it (``Kueue``)
    title: str
    #: the upstream project (repository) whose API types and semantics this follows
    upstream: str
    #: every kind it watches, each with the versions hpctop understands, preferred first
    watches: tuple[tuple[ResourceSpec, ...], ...]
    #: fixture files (repository-relative) whose objects this backend reads, each with its source
    fixtures: tuple[str, ...]
    #: the reason codes its evidence can produce (``tests/backends/test_backends_registered.py`` checks them)
    reasons: frozenset[ReasonCode]
    #: the dotted module of its action plans (``hpctop.backends.kueue.act``), or None when read-only
    actions: str | None
    #: why there are no actions (required when ``actions`` is None)
    read_only: str = ""
    #: API group → the backend name its presence reveals (groups detected but not watched included)
    detects: Mapping[str, str] = field(default_factory=dict)
    #: its kinds are the core API's, served by every API server: never looked up in discovery
    builtin: bool = False
    #: label and annotation prefixes (or keys) it reads on pods and owners
    labels: tuple[str, ...] = ()
    #: the URL path prefix of the API its objects come from when that is not Kubernetes'
    #: (slurmrestd: ``/slurm``, which ``/slurmdb`` shares); its fixtures are that server's recorded documents
    foreign_api: str = ""
    #: resources it only writes (requested only where discovery lists them)
    writes: tuple[ResourceSpec, ...] = ()
    #: decoder key → (Struct, projection), for every kind it decodes
    decoders: Mapping[str, Decoder] = field(default_factory=dict)
    #: the bare kinds the actions and the console name its objects by → its decoder keys
    #: (``Workload`` → ``Workload.kueue.x-k8s.io``)
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: decoder keys whose objects the store keeps in ``objects`` (not owner kinds, not pods)
    object_kinds: frozenset[str] = frozenset()
    #: the discovery choice; None: :func:`first_served` over ``watches``
    select: Callable[[ServedApis], Selection] | None = None
    job_state: StateHook | None = None
    job_reasons: ReasonHook | None = None
    fold_queues: QueueFold | None = None
    queue_shape: QueueShape | None = None
    place_in_queue: PlaceHook | None = None

    @property
    def api_versions(self) -> Mapping[str, tuple[str, ...]]:
        """group → the versions hpctop reads or writes there, preferred first."""
        out: dict[str, list[str]] = {}
        for spec in (*(s for alternatives in self.watches for s in alternatives), *self.writes):
            versions = out.setdefault(spec.group, [])
            if spec.version not in versions:
                versions.append(spec.version)
        return {group: tuple(versions) for group, versions in out.items()}

    def choose(self, apis: ServedApis) -> Selection:
        """What to watch on a cluster that serves ``apis``."""
        return self.select(apis) if self.select is not None else first_served(self.watches, apis)
