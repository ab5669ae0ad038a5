"""A job's topology as text lines: its placement drawn as a tree over the scheduler's levels.

Why: the ``topology`` field of a job row (:func:`hpctop.model.topology.job_topology`) is data;
a person reading the job detail wants to see at a glance which blocks, racks or cliques the gang
spans and, for a pending one, the scheduler's reason no domain fits. The lines are plain text
(cluster strings included as they are): the console's detail screen sanitises each one.
"""

from __future__ import annotations

from typing import Any


def _short(label: str) -> str:
    """``cloud.provider.com/topology-rack`` → ``topology-rack`` (the part a person reads)."""
    return label.rsplit("/", 1)[-1]


def _tree(domains: list[dict[str, Any]], width: int) -> list[str]:
    """Domains sorted by path, each line showing only the part of the path that changed."""
    out: list[str] = []
    previous: list[str] = []
    for d in sorted(domains, key=lambda d: d["path"]):
        path: list[str] = d["path"]
        same = 0
        while same < len(path) - 1 and same < len(previous) and previous[same] == path[same]:
            same += 1
        cells = ["" for _ in path[:same]] + path[same:]
        text = "  ".join(f"{c:<{width}}" for c in cells).rstrip()
        out.append(f"    {text}  {'█' * min(d['pods'], 16)} {d['pods']} pod{'s' if d['pods'] != 1 else ''}")
        previous = path
    return out


def topology_lines(topo: dict[str, Any]) -> list[str]:
    """The detail's Topology section, line by line."""
    lines: list[str] = []
    kueue = topo.get("kueue")
    if kueue is not None:
        for req in kueue.get("requests", []):
            level = _short(req["level"]) if req["level"] else "-"
            lines.append(f"  Kueue TAS: pod set {req['pod_set']} {req['mode']} {level}")
        for p in kueue.get("placements", []):
            named = f" over topology {p['topology']}" if "topology" in p else ""
            lines.append(f"  placed{named}: {len(p['domains'])} domain(s)")
            if all("path" in d for d in p["domains"]) and p["domains"]:
                levels = list(p["spans"])
                width = max(len(_short(v)) for v in levels)
                lines.append(("    " + "  ".join(f"{_short(v):<{width}}" for v in levels)).rstrip())
                lines.extend(_tree(p["domains"], width))
            else:
                for d in p["domains"][:64]:
                    where = ", ".join(f"{_short(k)}={v}" for k, v in d["values"].items())
                    lines.append(f"    {where}: {d['pods']} pod(s)")
            spans = ", ".join(f"{len(vs)} {_short(k)}" for k, vs in p["spans"].items())
            lines.append(f"    spans {spans}")
    volcano = topo.get("volcano")
    if volcano is not None:
        nt = volcano.get("network_topology")
        if nt is not None:
            highest = nt["highest_tier_allowed"] or "-"
            lines.append(f"  Volcano networkTopology {nt['mode']}, highest tier allowed {highest}")
        for tier, names in volcano.get("spans", {}).items():
            lines.append(f"  HyperNode {tier}: {', '.join(names)}")
    podgroup = topo.get("podgroup")
    if podgroup is not None:
        lines.append(f"  PodGroup topology keys: {', '.join(podgroup['keys'])}")
    cliques = topo.get("nvlink_cliques")
    if cliques:
        lines.append(f"  NVLink cliques (GFD): {', '.join(cliques)}")
    why = topo.get("why_no_domain")
    if why is not None:
        lines.append(f"  no domain fits ({why['source']}): {why['message']}")
    return lines
