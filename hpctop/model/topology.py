"""A gang's placement over its topology: which domains it spans and, pending, why none fits.

Why: a multi-node GPU job is fast only when its pods share a rack, a block or an NVLink clique,
and three schedulers each say where they put a gang in their own words: Kueue Topology Aware
Scheduling in the admission's ``topologyAssignment`` (levels are node label keys, decoded into
domains and pod counts by ``hpctop.backends.kueue.wire``), Volcano in HyperNodes (tiers of network
domains, a job's ``networkTopology`` saying how high it may spread), and GPU Feature Discovery in
the node label ``nvidia.com/gpu.clique`` (the NVLink domain of multi-node NVLink systems). This
module joins them for one job into plain data (:func:`job_topology`) that the jobs table (the
``topology`` field of ``hpctop jobs -o json``) and the job detail show. It computes nothing the
schedulers did not say: domains are the scheduler's own, spans are read from the job's nodes'
labels, and a pending gang's "why" is the scheduler's message (Kueue's
``TopologyPlacementFailed``, a PodGroup's condition), quoted as evidence. Two Kueue facts a row
shows beside the placement live here too: MultiKueue's worker cluster (:func:`multikueue_cluster`)
and the job's LocalQueue admission fair sharing usage (:func:`admission_fair_sharing`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hpctop.model.objects import (
    KUEUE_GROUP,
    VOLCANO_GROUP,
    HyperNode,
    Job,
    KueueWorkload,
    LocalQueue,
    Node,
    ObjectKey,
    PodGroup,
    TopologyLevels,
)
from hpctop.model.states import ReasonCode

#: GPU Feature Discovery's NVLink clique of a node (multi-node NVLink: GB200 NVL72 and kin)
CLIQUE_LABEL = "nvidia.com/gpu.clique"


def _spans(levels: tuple[str, ...], domains: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {level: sorted({d["values"][level] for d in domains}) for level in levels}


#: the lowest level Kueue names alone when a Topology has it (``topologyAssignment`` docs)
HOSTNAME = "kubernetes.io/hostname"


def _topology_for(levels: tuple[str, ...], topologies: list[TopologyLevels]) -> TopologyLevels | None:
    """The Topology whose levels end with the assignment's (Kueue names only the lowest ones)."""
    for topo in sorted(topologies, key=lambda t: t.name):
        if levels and topo.levels[-len(levels) :] == levels:
            return topo
    return None


def _full_spans(
    levels: tuple[str, ...], topo: TopologyLevels, domains: list[dict[str, Any]], nodes: Mapping[str, Node]
) -> dict[str, list[str]] | None:
    """Every level of ``topo`` a hostname-only placement spans, from its nodes' labels.

    Each domain gains ``path``: its value at every level of ``topo`` (``?`` where a node lacks the
    label), so a view can draw the placement as a tree.
    """
    if levels != (HOSTNAME,):
        return None
    hosts = [d["values"][HOSTNAME] for d in domains]
    if not all(h in nodes for h in hosts):
        return None  # a node hpctop does not see: say only what Kueue said
    for d, h in zip(domains, hosts, strict=True):
        d["path"] = [nodes[h].labels.get(level, "?") for level in topo.levels]
    return {
        level: sorted({nodes[h].labels[level] for h in hosts if level in nodes[h].labels})
        for level in topo.levels
    }


def _kueue(
    wl: KueueWorkload, topologies: list[TopologyLevels], nodes: Mapping[str, Node]
) -> dict[str, Any] | None:
    if not wl.placements and not wl.topology_requests:
        return None
    out: dict[str, Any] = {"source": "kueue:Workload"}
    if wl.topology_requests:
        out["requests"] = [
            {"pod_set": r.pod_set, "mode": r.mode, "level": r.level} for r in wl.topology_requests
        ]
    placed: list[dict[str, Any]] = []
    for p in wl.placements:
        domains = [{"values": dict(zip(p.levels, d.values, strict=True)), "pods": d.pods} for d in p.domains]
        entry: dict[str, Any] = {"pod_set": p.pod_set, "levels": list(p.levels), "domains": domains}
        topo = _topology_for(p.levels, topologies)
        full = _full_spans(p.levels, topo, domains, nodes) if topo is not None else None
        if topo is not None:
            entry["topology"] = topo.name
        entry["spans"] = full if full is not None else _spans(p.levels, domains)
        placed.append(entry)
    if placed:
        out["placements"] = placed
    return out


def _hypernodes_of(node: str, by_name: Mapping[str, HyperNode], nodes: Mapping[str, Node]) -> list[HyperNode]:
    """The HyperNodes holding ``node``, lowest tier first, following HyperNode members upward."""

    def holds(hn: HyperNode, name: str, kind: str) -> bool:
        labels = nodes[name].labels if kind == "Node" and name in nodes else {}
        for member_kind, how, value in hn.members:
            if member_kind != kind:
                continue
            if how == "exactMatch" and value == name:
                return True
            if how == "regexMatch":
                try:
                    if re.fullmatch(value, name):
                        return True
                except re.error:
                    continue
            if how == "labelMatch" and value:
                wanted = dict(part.split("=", 1) for part in value.split(",") if "=" in part)
                if wanted and all(labels.get(k) == v for k, v in wanted.items()):
                    return True
        return False

    found = [hn for hn in by_name.values() if holds(hn, node, "Node")]
    seen = {hn.name for hn in found}
    frontier = list(found)
    while frontier:
        child = frontier.pop()
        for hn in by_name.values():
            if hn.name not in seen and holds(hn, child.name, "HyperNode"):
                seen.add(hn.name)
                found.append(hn)
                frontier.append(hn)
    return sorted(found, key=lambda h: (h.tier, h.name))


@dataclass(frozen=True, slots=True)
class TopologyObjects:
    """The topology objects of a snapshot: Volcano HyperNodes by name, Kueue Topologies."""

    hypernodes: Mapping[str, HyperNode]
    topologies: list[TopologyLevels]


def topology_objects(objects: Mapping[ObjectKey, Any]) -> TopologyObjects:
    """One pass over the backend objects (once per table, not once per job)."""
    hypernodes: dict[str, HyperNode] = {}
    topologies: list[TopologyLevels] = []
    for obj in objects.values():
        if isinstance(obj, HyperNode):
            hypernodes[obj.name] = obj
        elif isinstance(obj, TopologyLevels):
            topologies.append(obj)
    return TopologyObjects(hypernodes, topologies)


def _volcano(
    job: Job, pg: PodGroup | None, hypernodes: Mapping[str, HyperNode], nodes: Mapping[str, Node]
) -> dict[str, Any] | None:
    constraint = pg.network_topology if pg is not None else None
    if not hypernodes and constraint is None:
        return None
    out: dict[str, Any] = {"source": "volcano:HyperNode"}
    if constraint is not None:
        out["network_topology"] = {"mode": constraint[0], "highest_tier_allowed": constraint[1]}
    tiers: dict[int, set[str]] = {}
    for node in job.nodes:
        for hn in _hypernodes_of(node, hypernodes, nodes):
            tiers.setdefault(hn.tier, set()).add(hn.name)
    if tiers:
        out["spans"] = {f"tier{t}": sorted(names) for t, names in sorted(tiers.items())}
    return out


def multikueue_cluster(job: Job, objects: Mapping[ObjectKey, Any]) -> dict[str, Any] | None:
    """MultiKueue: the worker cluster a job's Workload runs on (or those nominated), or None."""
    for key in job.backend_objects:
        obj = objects.get(key)
        if isinstance(obj, KueueWorkload) and (obj.cluster_name or obj.nominated_clusters):
            return {"cluster": obj.cluster_name, "nominated": list(obj.nominated_clusters)}
    return None


def admission_fair_sharing(job: Job, objects: Mapping[ObjectKey, Any]) -> dict[str, Any] | None:
    """The consumed resources Kueue's admission fair sharing holds against the job's LocalQueue."""
    for key in job.backend_objects:
        wl = objects.get(key)
        if isinstance(wl, KueueWorkload):
            lq = objects.get((KUEUE_GROUP, "LocalQueue", wl.namespace, wl.queue_name))
            if isinstance(lq, LocalQueue) and lq.consumed is not None:
                used = lq.consumed
                return {
                    "local_queue": f"{lq.namespace}/{lq.name}",
                    "consumed_gpus": used.gpu / 1000,
                    "consumed_cpus": used.cpu / 1000,
                    "consumed_memory": used.memory,
                }
    return None


def job_topology(
    job: Job,
    objects: Mapping[ObjectKey, Any],
    nodes: Mapping[str, Node],
    found_objects: TopologyObjects | None = None,
) -> dict[str, Any] | None:
    """The job's topology as plain data, or None when no scheduler or label says anything.

    ``found_objects``: :func:`topology_objects` of ``objects``, when the caller asks for many jobs.
    """
    index = found_objects if found_objects is not None else topology_objects(objects)
    out: dict[str, Any] = {}
    kueue = pod_group = None
    for key in job.backend_objects:
        obj = objects.get(key)
        if isinstance(obj, KueueWorkload) and key[0] == KUEUE_GROUP:
            kueue = obj
        elif isinstance(obj, PodGroup):
            pod_group = obj
    if kueue is not None:
        found = _kueue(kueue, index.topologies, nodes)
        if found is not None:
            out["kueue"] = found
    volcano_pg = pod_group if pod_group is not None and pod_group.group == VOLCANO_GROUP else None
    volcano = _volcano(job, volcano_pg, index.hypernodes, nodes)
    if volcano is not None and (job.nodes or "network_topology" in volcano):
        out["volcano"] = volcano
    if pod_group is not None and pod_group.topology_keys:
        out["podgroup"] = {
            "source": "k8s:PodGroup.schedulingConstraints",
            "keys": list(pod_group.topology_keys),
        }
    cliques = sorted(
        {nodes[n].labels[CLIQUE_LABEL] for n in job.nodes if n in nodes and CLIQUE_LABEL in nodes[n].labels}
    )
    if cliques:
        out["nvlink_cliques"] = cliques
    if not out:
        return None
    blocked = next((r for r in job.reasons if r.code == ReasonCode.TOPOLOGY), None)
    if blocked is not None and job.state.is_pending:
        out["why_no_domain"] = {"source": blocked.source, "message": blocked.message}
    return out
