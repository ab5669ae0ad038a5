"""Pods and Nodes decoded with msgspec: typed Structs of only the fields hpctop reads.

Why msgspec (a dependency since PERFORMANCE.md P1/P3/P4 missed with pydantic): a real pod is
4-20 KB of JSON of which hpctop reads a few hundred bytes (names, labels, requests, a condition
or two). pydantic-core, even into TypedDicts, and ``orjson.loads`` both build every field as
Python objects first (env lists, volumes, probes, managedFields) only for them to be dropped;
parsing alone was over the P1 budget (bench/README.md). ``msgspec.json.Decoder(type=...)``
validates straight from the bytes into ``Struct`` instances and skips the fields a Struct does
not declare in C, without building them. Writing such a skipping parser ourselves would be a
JSON parser in C; msgspec is that parser, well kept and typed.

Semantics stay pydantic's: msgspec runs *strict* (a str field takes only a JSON string, an int
only a JSON integer, a bool only true/false), which accepts a subset of what the pydantic wire
models accept, and on that subset builds the same values. Whatever msgspec refuses is handed to
the pydantic path (:mod:`hpctop.model.decode`), which then either coerces it exactly as before
(``"3"`` for an int) or refuses it whole. So the fast path changes the cost, never the result;
``tests/test_decode_fast.py`` checks this on generated pods, malformed ones included.

The Structs are ``gc=False``: they live only while a pod is projected, hold no cycles, and not
tracking them keeps the cyclic collector out of bulk decode.
"""

from __future__ import annotations

import msgspec

_Quantity = str | int | float


class _S(msgspec.Struct, gc=False, frozen=True):
    """Base of the wire Structs: unknown fields are skipped (msgspec's default), never built."""


class OwnerRefS(_S, frozen=True):
    apiVersion: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool = False


class MetaS(_S, frozen=True):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    ownerReferences: list[OwnerRefS] | None = None
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None


class ResourcesS(_S, frozen=True):
    requests: dict[str, _Quantity] | None = None
    limits: dict[str, _Quantity] | None = None


class ContainerS(_S, frozen=True):
    name: str = ""
    resources: ResourcesS | None = None


class TolerationS(_S, frozen=True):
    key: str | None = None
    operator: str = "Equal"
    value: str | None = None
    effect: str | None = None


class GateS(_S, frozen=True):
    name: str


class PodSpecS(_S, frozen=True):
    nodeName: str | None = None
    schedulerName: str = "default-scheduler"
    containers: list[ContainerS] = []  # msgspec copies a mutable default per instance
    initContainers: list[ContainerS] | None = None
    overhead: dict[str, _Quantity] | None = None
    nodeSelector: dict[str, str] | None = None
    tolerations: list[TolerationS] | None = None
    priority: int | None = None
    priorityClassName: str | None = None
    schedulingGates: list[GateS] | None = None
    activeDeadlineSeconds: int | None = None


class ConditionS(_S, frozen=True):
    type: str
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None


class TerminatedS(_S, frozen=True):
    reason: str | None = None
    finishedAt: str | None = None


class ContainerStateS(_S, frozen=True):
    terminated: TerminatedS | None = None


class ContainerStatusS(_S, frozen=True):
    restartCount: int = 0
    state: ContainerStateS | None = None
    lastState: ContainerStateS | None = None


class PodStatusS(_S, frozen=True):
    phase: str = "Pending"
    reason: str | None = None
    startTime: str | None = None
    conditions: list[ConditionS] | None = None
    containerStatuses: list[ContainerStatusS] | None = None


NO_SPEC = PodSpecS()
NO_STATUS = PodStatusS()


class PodS(_S, frozen=True):
    metadata: MetaS
    # absent → the shared empty spec/status (a JSON null is refused, as by the pydantic models)
    spec: PodSpecS = NO_SPEC
    status: PodStatusS = NO_STATUS


class PodEventS(_S, frozen=True):
    type: str
    object: PodS


class ListMetaS(_S, frozen=True):
    resourceVersion: str = ""
    continue_: str | None = msgspec.field(default=None, name="continue")


NO_LIST_META = ListMetaS()


class PodListS(_S, frozen=True):
    metadata: ListMetaS = NO_LIST_META
    items: list[PodS] = []  # msgspec copies a mutable default per instance


class TaintS(_S, frozen=True):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


class NodeSpecS(_S, frozen=True):
    unschedulable: bool = False
    taints: list[TaintS] | None = None


class NodeStatusS(_S, frozen=True):
    capacity: dict[str, _Quantity] | None = None
    allocatable: dict[str, _Quantity] | None = None
    conditions: list[ConditionS] | None = None


class NodeS(_S, frozen=True):
    """The fields of ``decode.WireNode`` under the same names: ``node_from_wire`` reads either."""

    metadata: MetaS
    spec: NodeSpecS = NodeSpecS()
    status: NodeStatusS = NodeStatusS()


class NodeEventS(_S, frozen=True):
    type: str
    object: NodeS


class NodeListS(_S, frozen=True):
    metadata: ListMetaS = NO_LIST_META
    items: list[NodeS] = []  # msgspec copies a mutable default per instance


POD = msgspec.json.Decoder(PodS)
POD_EVENT = msgspec.json.Decoder(PodEventS)
POD_LIST = msgspec.json.Decoder(PodListS)
NODE_EVENT = msgspec.json.Decoder(NodeEventS)
NODE_LIST = msgspec.json.Decoder(NodeListS)

#: what msgspec raises on bytes it does not take (the pydantic path then decides): besides its
#: own errors, invalid UTF-8 raises UnicodeDecodeError and very deep nesting (even in a field
#: that is skipped) RecursionError
NotTaken = (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError)

__all__ = [
    "NODE_EVENT",
    "NODE_LIST",
    "NO_SPEC",
    "NO_STATUS",
    "POD",
    "POD_EVENT",
    "POD_LIST",
    "NodeEventS",
    "NodeListS",
    "NodeS",
    "NotTaken",
    "PodEventS",
    "PodListS",
    "PodS",
]
