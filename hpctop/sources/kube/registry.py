"""The one table of where each kind lives on *this* cluster: filled from discovery, used by reads and writes.

Why: the kinds hpctop knows are declared once (:mod:`hpctop.sources.kube.resources`), but which of
them a cluster serves, and at which version, only the cluster can say. A table written for one
Kueue release (v1beta2) reads nothing and acts on nothing on another (v1beta1 only), and a request
for a resource the installed operator lacks is a 404 and a note on every command. So the reflectors,
the one-shot tables and the actions all look a kind up here, and the served version decides the
path. Nothing discovery does not list is requested; the core API (pods, nodes, batch Jobs,
Deployments, PriorityClasses, ConfigMaps) is served by every API server and needs no look-up.

:func:`discover_registry` reads ``GET /apis`` and then, unless the answer is the aggregated shape
that already lists resources, the per-version resource lists ``GET /apis/<group>/<version>`` of the
groups and versions hpctop understands (one request each, concurrently). A version whose list
cannot be read lists nothing (and a note says so); when ``/apis`` itself fails, the core alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from hpctop.backends import registry as backends
from hpctop.model.decode import DecodeError
from hpctop.sources.kube.discovery import Discovery, discover, parse_groups
from hpctop.sources.kube.errors import KubeError, NotFound
from hpctop.sources.kube.resources import (
    BUILTIN_RESOURCES,
    DEFAULT_RESOURCES,
    ResourceSpec,
    understood_versions,
)
from hpctop.sources.kube.transport import KubeClient

#: the bare kinds the actions and the console key jobs and queues by → the registry's kind (each
#: backend declares its own: ``Backend.aliases``)
ALIASES: Mapping[str, str] = backends.ALIASES


@dataclass(frozen=True, slots=True)
class ResourceRegistry:
    """kind → where it is served; ``discovery`` is None when discovery could not be read (core only)."""

    discovery: Discovery | None
    specs: Mapping[str, ResourceSpec] = field(default_factory=dict)

    @classmethod
    def of(cls, discovery: Discovery | None) -> ResourceRegistry:
        specs = {s.kind: s for s in BUILTIN_RESOURCES}
        if discovery is not None:
            for spec in (*discovery.resources, *discovery.write_only):
                specs.setdefault(spec.kind, spec)
        return cls(discovery, specs)

    def spec(self, kind: str) -> ResourceSpec | None:
        """Where ``kind`` (a model kind, or a bare ``Workload``/``ClusterQueue``/``LocalQueue``) is
        served, or None when this cluster does not serve it."""
        return self.specs.get(ALIASES.get(kind, kind))

    def watch_list(self) -> tuple[ResourceSpec, ...]:
        """What a live session lists and watches: the core first, then the discovered kinds."""
        return self.discovery.watch_list() if self.discovery is not None else DEFAULT_RESOURCES


async def discover_registry(client: KubeClient, notes: list[str] | None = None) -> ResourceRegistry:
    """The registry of this cluster, from ``/apis`` and the per-version resource lists (see the module)."""
    try:
        apis = await client.get("/apis", {})
        served, listed = parse_groups(apis)
    except (KubeError, DecodeError, ValueError) as exc:
        if notes is not None:
            notes.append(f"discovery: {exc}; reading core resources only")
        return ResourceRegistry.of(None)
    lists: dict[str, bytes] = {}
    if not listed:  # the classic APIGroupList names versions, not resources: ask each version
        wanted = [
            (group, version)
            for group, versions in understood_versions().items()
            for version in versions
            if version in served.get(group, ())
        ]

        async def one(group: str, version: str) -> None:
            path = f"/apis/{group}/{version}"
            try:
                lists[f"{group}/{version}"] = await client.get(path, {})
            except NotFound:
                lists[f"{group}/{version}"] = orjson.dumps({"kind": "APIResourceList", "resources": []})
            except KubeError as exc:
                lists[f"{group}/{version}"] = orjson.dumps({"kind": "APIResourceList", "resources": []})
                if notes is not None:
                    notes.append(f"discovery of {group}/{version}: {exc}; its resources are not read")

        await asyncio.gather(*(one(g, v) for g, v in wanted))
    try:
        return ResourceRegistry.of(discover(apis, lists))
    except DecodeError as exc:
        if notes is not None:
            notes.append(f"discovery: {exc}; reading core resources only")
        return ResourceRegistry.of(None)


__all__ = ["ALIASES", "ResourceRegistry", "discover_registry"]
