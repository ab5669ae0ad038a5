"""Which scheduler backends and workload controllers a cluster has, from API discovery (§1.1).

Why: hpctop must never assume a CRD exists (a watch on a missing resource is a 404 loop) nor
guess its version (Kueue serves v1beta1 and/or v1beta2 with different field names). The API
server's ``GET /apis`` answers both in one request. :func:`discover` reads that answer, in either
shape the server sends (the classic ``APIGroupList``, or the aggregated ``APIGroupDiscoveryList``
that also lists each version's resources), and returns the :class:`ResourceSpec`s to list and
watch on top of the core ones, with the version chosen by each registered backend
(:mod:`hpctop.backends.registry`: Kueue v1beta2 over v1beta1; mpi-operator's MPIJob v2beta1 over
training-operator's v1). ``GET /apis`` names groups and versions, not
resources: pass ``resource_lists`` (``GET /apis/{group}/{version}`` bodies, keyed by groupVersion)
to drop resources a served version lacks (Kueue's Cohort is v1alpha1 in older releases); the
aggregated shape carries them already.

YuniKorn has no CRDs: it is found by its Service (``yunikorn-service``) or ``schedulerName``,
not here. Call :func:`discover` again when ``/apis`` changes (a backend installed live).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from hpctop.backends import registry
from hpctop.backends.contract import ResourceSpec, ServedApis
from hpctop.model.decode import DecodeError
from hpctop.sources.kube.resources import DEFAULT_RESOURCES

#: API group → the backend name it reveals (groups hpctop detects but does not watch included)
BACKEND_GROUPS: Mapping[str, str] = registry.DETECTED_GROUPS


@dataclass(frozen=True, slots=True)
class Discovery:
    """What ``/apis`` says: the extra resources to watch, the backends present, versions chosen."""

    resources: tuple[ResourceSpec, ...]
    backends: frozenset[str]
    #: group → served versions (as listed by the server)
    served: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: group → the version hpctop reads (Kueue, Volcano, ...); absent when the group is absent
    versions: Mapping[str, str] = field(default_factory=dict)
    #: resources hpctop writes but does not watch (Volcano's bus Commands), where listed
    write_only: tuple[ResourceSpec, ...] = ()

    def watch_list(self, core: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES) -> tuple[ResourceSpec, ...]:
        """The core resources followed by the discovered ones (no duplicates)."""
        seen = {(s.group, s.plural) for s in core}
        return core + tuple(s for s in self.resources if (s.group, s.plural) not in seen)


def _load(raw: bytes, what: str) -> dict[str, object]:
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(f"{what}: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise DecodeError(f"{what}: not an object")
    return doc


def parse_groups(raw: bytes) -> tuple[dict[str, tuple[str, ...]], dict[str, frozenset[str]]]:
    """``/apis`` → ({group: served versions}, {groupVersion: resource plurals} when aggregated)."""
    doc = _load(raw, "/apis")
    served: dict[str, tuple[str, ...]] = {}
    plurals: dict[str, frozenset[str]] = {}
    aggregated = doc.get("kind") == "APIGroupDiscoveryList" or ("items" in doc and "groups" not in doc)
    entries = doc.get("items" if aggregated else "groups")
    if not isinstance(entries, list):
        raise DecodeError("/apis: neither an APIGroupList nor an APIGroupDiscoveryList")
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        meta = entry.get("metadata")
        name = (meta.get("name") if isinstance(meta, dict) else None) if aggregated else entry.get("name")
        versions = entry.get("versions")
        if not isinstance(name, str) or not isinstance(versions, list):
            continue
        found: list[str] = []
        for v in versions:
            if not isinstance(v, dict) or not isinstance(v.get("version"), str):
                continue
            found.append(v["version"])
            resources = v.get("resources")
            if aggregated and isinstance(resources, list):
                plurals[f"{name}/{v['version']}"] = frozenset(
                    r["resource"]
                    for r in resources
                    if isinstance(r, dict) and isinstance(r.get("resource"), str)
                )
        served[name] = tuple(found)
    return served, plurals


def _resource_list(raw: bytes, group_version: str) -> frozenset[str]:
    doc = _load(raw, group_version)
    items = doc.get("resources")
    if not isinstance(items, list):
        raise DecodeError(f"{group_version}: not an APIResourceList")
    return frozenset(
        r["name"]
        for r in items
        if isinstance(r, dict) and isinstance(r.get("name"), str) and "/" not in r["name"]
    )


def discover(apis: bytes, resource_lists: Mapping[str, bytes] | None = None) -> Discovery:
    """Resources to watch beyond the core, from ``GET /apis`` (and optional per-version lists).

    Raises :class:`DecodeError` when ``apis`` is not a discovery document.
    """
    served, plurals = parse_groups(apis)
    for group_version, raw in (resource_lists or {}).items():
        plurals[group_version] = _resource_list(raw, group_version)

    offered = ServedApis(served, plurals)
    chosen = registry.select(offered)
    write_only = registry.write_only(offered)
    backends = frozenset(BACKEND_GROUPS[g] for g in served if g in BACKEND_GROUPS)
    scheduling = served.get("scheduling.k8s.io", ())
    if "v1alpha1" in scheduling or "v1alpha2" in scheduling:
        backends |= {"native-gang"}
    return Discovery(chosen.resources, backends, served, dict(chosen.versions), write_only)


def resources_to_watch(
    apis: bytes, resource_lists: Mapping[str, bytes] | None = None
) -> tuple[ResourceSpec, ...]:
    """The whole watch list for a live session: the core resources plus what ``/apis`` offers."""
    return discover(apis, resource_lists).watch_list()
