"""Kueue Topology Aware Scheduling on the wire: ``Topology`` objects and compressed assignments.

Why a module of its own: an admitted Workload's ``status.admission.podSetAssignments[].
topologyAssignment`` says where its pods go, domain by domain, and Kueue v1beta2 writes it
*compressed* (kubernetes-sigs/kueue ``apis/kueue/v1beta2/workload_types.go``,
``TopologyAssignment``): ``levels`` (node label keys, highest first) and ``slices``, each with a
``domainCount``, one ``valuesPerLevel`` entry per level (``universal``: one value for every domain
of the slice, or ``individual``: ``prefix`` + each of ``roots`` + ``suffix``) and ``podCounts``
(``universal`` or ``individual``). v1beta1 wrote it plain: ``domains[{values, count}]``. Both are
decoded here into :class:`~hpctop.model.objects.TopologyPlacement` (domains and pod counts), so a
view never sees the encoding. A slice whose lists do not match its ``domainCount`` is malformed
(upstream validation refuses it), and so is one that would unfold into more domains than a job
can have pods: either raises :class:`DecodeError` and the Workload is skipped and noted.

The ``Topology`` kind (``spec.levels[].nodeLabel``, cluster-scoped) names the levels a
ResourceFlavor's ``topologyName`` points at. Part of the read side: it imports the model only.
"""

from __future__ import annotations

import msgspec

from hpctop.model.objects import TopologyDomain, TopologyLevels, TopologyPlacement, TopologyRequest
from hpctop.model.projection import DecodeError, count
from hpctop.model.structs import MetaS, WireStruct

#: decoder key of Kueue's Topology (``Kind.group``: KAI and others define a ``Topology`` too)
KUEUE_TOPOLOGY = "Topology.kueue.x-k8s.io"
#: at most this many domains unfold from one Workload (a hostile domainCount must not fill memory)
MAX_DOMAINS = 100_000


class WireIndividualValues(WireStruct, frozen=True):
    prefix: str | None = None
    suffix: str | None = None
    roots: list[str] = msgspec.field(default_factory=list)


class WireLevelValues(WireStruct, frozen=True):
    universal: str | None = None
    individual: WireIndividualValues | None = None


class WirePodCounts(WireStruct, frozen=True):
    universal: int | None = None
    individual: list[int] | None = None


class WireSlice(WireStruct, frozen=True):
    needed = frozenset({"domainCount", "valuesPerLevel", "podCounts"})

    domainCount: int = 0
    valuesPerLevel: list[WireLevelValues] = msgspec.field(default_factory=list)
    podCounts: WirePodCounts = WirePodCounts()


class WireDomain(WireStruct, frozen=True):
    """v1beta1's plain domain: one value per level and the pod count."""

    values: list[str] = msgspec.field(default_factory=list)
    count: int = 0


class WireTopologyAssignment(WireStruct, frozen=True):
    needed = frozenset({"levels", "slices", "domains"})

    levels: list[str] = msgspec.field(default_factory=list)
    slices: list[WireSlice] | None = None  # v1beta2 (compressed)
    domains: list[WireDomain] | None = None  # v1beta1


class WirePodSetAssignment(WireStruct, frozen=True):
    needed = frozenset({"topologyAssignment"})

    name: str = "main"
    count: int | None = None
    topologyAssignment: WireTopologyAssignment | None = None


class WireTopologyRequest(WireStruct, frozen=True):
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None


def _level_values(level: WireLevelValues, n: int, where: str) -> list[str]:
    if level.universal is not None:
        return [level.universal] * n
    if level.individual is not None:
        ind = level.individual
        if len(ind.roots) != n:
            raise DecodeError(
                f"{len(ind.roots)} roots for domainCount {n}", field=f"{where}.individual.roots"
            )
        return [f"{ind.prefix or ''}{root}{ind.suffix or ''}" for root in ind.roots]
    raise DecodeError("neither universal nor individual is set", field=where)


def _pod_counts(counts: WirePodCounts, n: int, where: str) -> list[int]:
    if counts.universal is not None:
        return [count(counts.universal, f"{where}.universal", 0)] * n
    if counts.individual is not None:
        if len(counts.individual) != n:
            raise DecodeError(
                f"{len(counts.individual)} counts for domainCount {n}", field=f"{where}.individual"
            )
        return [count(c, f"{where}.individual", 0) for c in counts.individual]
    raise DecodeError("neither universal nor individual is set", field=where)


def decode_assignment(ta: WireTopologyAssignment, pod_set: str, where: str) -> TopologyPlacement:
    """One pod set's placement, its domains unfolded from the compressed slices (or v1beta1's list)."""
    levels = tuple(ta.levels)
    domains: list[TopologyDomain] = []
    for i, dom in enumerate(ta.domains or []):
        if len(dom.values) != len(levels):
            raise DecodeError(
                f"{len(dom.values)} values for {len(levels)} levels", field=f"{where}.domains[{i}]"
            )
        domains.append(TopologyDomain(tuple(dom.values), count(dom.count, f"{where}.domains[{i}].count", 0)))
    for i, sl in enumerate(ta.slices or []):
        at = f"{where}.slices[{i}]"
        n = count(sl.domainCount, f"{at}.domainCount", 0)
        if len(domains) + n > MAX_DOMAINS:
            raise DecodeError(f"more than {MAX_DOMAINS:,} domains", field=f"{at}.domainCount")
        if len(sl.valuesPerLevel) != len(levels):
            raise DecodeError(
                f"{len(sl.valuesPerLevel)} values for {len(levels)} levels", field=f"{at}.valuesPerLevel"
            )
        columns = [_level_values(v, n, f"{at}.valuesPerLevel[{j}]") for j, v in enumerate(sl.valuesPerLevel)]
        pods = _pod_counts(sl.podCounts, n, f"{at}.podCounts")
        domains.extend(TopologyDomain(tuple(col[k] for col in columns), pods[k]) for k in range(n))
    return TopologyPlacement(pod_set, levels, tuple(domains))


def placements(assignments: list[WirePodSetAssignment] | None) -> tuple[TopologyPlacement, ...]:
    """Every pod set's placement in an admission (pod sets without a topologyAssignment left out)."""
    out: list[TopologyPlacement] = []
    for i, psa in enumerate(assignments or []):
        if psa.topologyAssignment is not None:
            where = f"status.admission.podSetAssignments[{i}].topologyAssignment"
            out.append(decode_assignment(psa.topologyAssignment, psa.name, where))
    return tuple(out)


def topology_request(pod_set: str, req: WireTopologyRequest | None) -> TopologyRequest | None:
    """A pod set's ``topologyRequest``: required beats preferred; unconstrained names no level."""
    if req is None:
        return None
    if req.required:
        return TopologyRequest(pod_set, "required", req.required)
    if req.preferred:
        return TopologyRequest(pod_set, "preferred", req.preferred)
    if req.unconstrained:
        return TopologyRequest(pod_set, "unconstrained", None)
    return None


# -- the Topology kind ---------------------------------------------------------------------------


class WireTopologyLevel(WireStruct, frozen=True):
    nodeLabel: str = ""


class WireTopologySpec(WireStruct, frozen=True):
    needed = frozenset({"levels"})

    levels: list[WireTopologyLevel] = msgspec.field(default_factory=list)


class WireTopology(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WireTopologySpec = WireTopologySpec()


def topology_from_wire(w: WireTopology, _api_version: str = "") -> TopologyLevels:
    if not w.metadata.name:
        raise DecodeError("Topology without metadata.name")
    levels = tuple(level.nodeLabel for level in w.spec.levels)
    if not all(levels):
        raise DecodeError("a level without nodeLabel", field="spec.levels")
    return TopologyLevels(w.metadata.name, w.metadata.resourceVersion, levels, "kueue")
