"""A watch event of a pod the store already holds: only what moves is decoded again.

Why: on a live cluster nearly every pod event is a status change (a restart, a condition, the
kubelet's heartbeat) or only a new resourceVersion, and a pod's spec, labels, kept annotations and
owner are written once and then stay. The general decoder (:func:`hpctop.model.decode.decode_event`)
builds and projects all of them again for each event: msgspec's Structs of the spec and the label
and annotation maps, the shared label strings, the request vector, the tolerations, ~17 us of the
~43 us an event cost (issue 16, P3 profile in bench/README.md).

Here a pod event is first read with the spec, the labels, the annotations and the owner references
left as raw JSON text (:class:`msgspec.Raw`, scanned but not built), and those four segments are
digested (``hash`` of their bytes, ``\\0``-separated: no JSON text holds a NUL, so no two segment
lists join to the same bytes). When the store holds the pod and recorded the same digest for it,
every field those segments decide is taken from the held pod, and only the metadata's
identity, resourceVersion and timestamps and the status are decoded and projected (the same helper
as the general projection: :func:`hpctop.model.projection.pod_status_parts`). Otherwise, and for
anything unusual (a bookmark, an event the strict decode refuses, a projection error, a DRA claim in
the status), the general decoder runs on the whole line, so errors, tolerant reading and notes are
exactly the general path's.

What makes the reuse exact:

- a digest is recorded (by the store) only for a pod it stored exactly as projected, never for one
  it rewrote (a DRA claim's devices, a KAI GPU-memory share): ``Store._apply_pod`` forgets the
  digest at every write, and ``Store.apply_line`` records the new one after the write only when the
  stored object is the projected one;
- every reused field is a function of the four segments and of the pod's namespace and name (the
  key the digest is filed under): see :func:`decode_pod_event`;
- ``hash`` of bytes is SipHash with a key drawn per process, so a collision cannot be crafted from
  outside and is a 2^-64 chance per event otherwise.

``tests/model/test_pod_events.py`` feeds random event sequences through this path and through the
general decoder and compares every stored pod and job row.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from hpctop.model import structs
from hpctop.model.decode import decode_event
from hpctop.model.events import EventType, WatchEvent
from hpctop.model.objects import Pod, PodKey
from hpctop.model.projection import DecodeError, parse_time, pod_status_parts
from hpctop.model.tolerant import NotTaken

_RAW_NONE = msgspec.Raw()


class _MetaW(msgspec.Struct, gc=False, frozen=True):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: msgspec.Raw = _RAW_NONE
    annotations: msgspec.Raw = _RAW_NONE
    ownerReferences: msgspec.Raw = _RAW_NONE
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None


class _PodW(msgspec.Struct, gc=False, frozen=True):
    metadata: _MetaW
    spec: msgspec.Raw = _RAW_NONE
    status: structs.PodStatusS = structs.NO_STATUS


class _PodEventW(msgspec.Struct, gc=False, frozen=True):
    type: str
    object: _PodW


_DECODER = msgspec.json.Decoder(_PodEventW)
_BOOKMARK = b'"BOOKMARK"'
_TYPES = {"ADDED": EventType.ADDED, "MODIFIED": EventType.MODIFIED, "DELETED": EventType.DELETED}
_NUL = b"\0"


def _general(raw: bytes) -> tuple[WatchEvent, int | None]:
    return decode_event("Pod", raw), None


def decode_pod_event(
    raw: bytes, held: Mapping[PodKey, Pod], digests: Mapping[PodKey, int]
) -> tuple[WatchEvent, int | None]:
    """One pod watch line → (the event, the digest of its static segments or None).

    ``held``: the store's pods; ``digests``: the digest the store recorded for each pod it holds
    exactly as projected. Raises :class:`DecodeError` as :func:`decode_event` does.
    """
    if _BOOKMARK in raw[:64]:
        return _general(raw)
    try:
        event = _DECODER.decode(raw)
    except NotTaken:
        return _general(raw)
    etype = _TYPES.get(event.type)
    w = event.object
    meta = w.metadata
    status = w.status
    if etype is None or not meta.name or not meta.namespace:
        return _general(raw)
    digest = hash(_NUL.join((meta.labels, meta.annotations, meta.ownerReferences, w.spec)))
    key = (meta.namespace, meta.name)
    old = held.get(key)
    if old is None or digests.get(key) != digest or status.extendedResourceClaimStatus is not None:
        return decode_event("Pod", raw), digest
    try:
        scheduled, terminated_reason, finished, restarts = pod_status_parts(status)
        created = parse_time(meta.creationTimestamp) or 0.0
        started = parse_time(status.startTime)
        deleted = parse_time(meta.deletionTimestamp)
    except DecodeError:
        return _general(raw)  # the general path says what is wrong, located
    # positional, in Pod's field order; every field not decoded here is one the four segments
    # (and the key) decide: labels, kept annotations, owner, the spec's node, scheduler, requests,
    # GPU indices and models, selector, tolerations, priority, gates, deadline, the pause-pod
    # test, the native gang's group, anti-affinity to itself. ``claims`` is None: the held pod
    # had none (the store records no digest for a pod with claims) and the status names none.
    pod = Pod(
        meta.namespace,
        meta.name,
        meta.uid,
        meta.resourceVersion,
        old.labels,
        old.annotations,
        old.owner,
        old.node_name,
        old.scheduler_name,
        status.phase,
        old.requests,
        old.gpu_indices,
        old.gpu_models,
        old.node_selector,
        old.tolerations,
        old.priority,
        old.priority_class,
        old.scheduling_gates,
        created,
        started,
        finished,
        deleted,
        old.active_deadline_seconds,
        scheduled,
        status.reason,
        terminated_reason,
        restarts,
        old.capacity_reservation,
        status.nominatedNodeName or None,
        None,
        old.scheduling_group,
        old.one_per_node,
    )
    return WatchEvent(etype, "Pod", pod, meta.resourceVersion), digest


__all__ = ["decode_pod_event"]
