"""Volcano's network topology on the wire: ``HyperNode`` (``topology.volcano.sh/v1alpha1``).

Why: Volcano (v1.12+) places a gang inside network domains it calls HyperNodes: each has a
``spec.tier`` (1 the lowest, e.g. a leaf switch; higher tiers hold lower ones), an optional
``tierName`` and ``members`` that are Nodes or HyperNodes chosen by ``selector.exactMatch.name``,
``regexMatch.pattern`` or ``labelMatch`` (a label selector; its ``matchLabels`` are read here);
``status.nodeCount`` counts the nodes below it (volcano-sh/apis
``pkg/apis/topology/v1alpha1/hypernode_types.go``). A job's ``networkTopology`` (mode
``hard``/``soft``, ``highestTierAllowed`` or ``highestTierName``) is copied by Volcano's job
controller onto its PodGroup, which is where hpctop reads it. The join of a job's nodes to the
HyperNodes holding them is :mod:`hpctop.model.topology`'s. Part of the read side: model only.
"""

from __future__ import annotations

import msgspec

from hpctop.model.objects import HyperNode
from hpctop.model.projection import DecodeError, count
from hpctop.model.structs import MetaS, WireStruct

HYPERNODE = "HyperNode.topology.volcano.sh"
#: a tier number beyond any real network (a hostile value must not pass as one)
MAX_TIER = 64


class WireExactMatch(WireStruct, frozen=True):
    name: str = ""


class WireRegexMatch(WireStruct, frozen=True):
    pattern: str = ""


class WireLabelMatch(WireStruct, frozen=True):
    matchLabels: dict[str, str] | None = None


class WireMemberSelector(WireStruct, frozen=True):
    exactMatch: WireExactMatch | None = None
    regexMatch: WireRegexMatch | None = None
    labelMatch: WireLabelMatch | None = None


class WireMember(WireStruct, frozen=True):
    type: str = "Node"
    selector: WireMemberSelector = WireMemberSelector()


class WireHyperNodeSpec(WireStruct, frozen=True):
    needed = frozenset({"tier", "members"})

    tier: int = 0
    tierName: str = ""
    members: list[WireMember] = msgspec.field(default_factory=list)


class WireHyperNodeStatus(WireStruct, frozen=True):
    nodeCount: int | None = None


class WireHyperNode(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WireHyperNodeSpec = WireHyperNodeSpec()
    status: WireHyperNodeStatus = WireHyperNodeStatus()


def _member(m: WireMember) -> tuple[str, str, str] | None:
    sel = m.selector
    if sel.exactMatch is not None and sel.exactMatch.name:
        return (m.type, "exactMatch", sel.exactMatch.name)
    if sel.regexMatch is not None and sel.regexMatch.pattern:
        return (m.type, "regexMatch", sel.regexMatch.pattern)
    if sel.labelMatch is not None and sel.labelMatch.matchLabels:
        labels = ",".join(f"{k}={v}" for k, v in sorted(sel.labelMatch.matchLabels.items()))
        return (m.type, "labelMatch", labels)
    return None


def hypernode_from_wire(w: WireHyperNode, _api_version: str = "") -> HyperNode:
    if not w.metadata.name:
        raise DecodeError("HyperNode without metadata.name")
    tier = w.spec.tier
    if not 0 <= tier <= MAX_TIER:
        raise DecodeError(f"{tier} is out of range (0 to {MAX_TIER})", field="spec.tier")
    members = tuple(found for m in w.spec.members if (found := _member(m)) is not None)
    return HyperNode(
        name=w.metadata.name,
        resource_version=w.metadata.resourceVersion,
        tier=tier,
        tier_name=w.spec.tierName,
        members=members,
        node_count=count(w.status.nodeCount, "status.nodeCount", 0),
    )
