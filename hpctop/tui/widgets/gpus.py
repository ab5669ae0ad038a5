"""The GPU pane: every GPU of the cluster at three zoom levels.

``cluster`` is a dense heat map, one character per node, so the 1,523 nodes of the Alibaba trace fit
in a 104×17 pane; ``partition`` is one line per node of the selected partition with one cell per GPU;
``node`` lists each GPU of the selected node with the jobs holding it. Meaning is carried by glyphs
(``·`` free, ``░▒▓█`` by fill, ``✕`` down, ``⊘`` cordoned) and colour only reinforces it (queue colour
of the holding job), so the colour-blind theme and monochrome terminals lose nothing.

Lines are formatted when data, zoom or cursor change, and ``render_line`` only slices them. The same
pass records where each node and partition name landed (``_hits``), so a click is looked up rather
than re-derived from the layout: a click on a node selects it, a double click zooms to it, a click on
a partition name shows that partition.

The map itself comes from :class:`GpuMapCache`: a new snapshot rebuilds only the nodes whose GPU
holders changed (a pod restart or a status change elsewhere keeps the node's :class:`NodeGpus`), and
when no node changed the previous map object is returned, so the pane neither reformats nor repaints.
The console's tick worker builds it (``prepare``) off the UI thread; the publish only picks it up.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hpctop.backends.dra.read import DraView, gpu_health
from hpctop.model.metrics import MetricsView
from hpctop.model.objects import Job, JobKey, Pod, PodKey
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import PartitionStatus
from hpctop.tui.colors import Palette, queue_var
from hpctop.tui.diffmap import diff, listed
from hpctop.tui.gpumap import (
    CORDONED,
    DOWN,
    GpuMap,
    NodeGpus,
    active_job_of,
    fill_glyph,
    node_gpus,
    node_order,
    with_nodes_replaced,
    with_totals,
)
from hpctop.tui.keymap import bindings
from hpctop.tui.sanitize import fit_cells, sanitize_display

ZOOMS = ("cluster", "partition", "node")


def _gpus(milli: int) -> str:
    return f"{milli / 1000:g}"


def dcgm_devices(metrics: MetricsView | None) -> dict[str, dict[PodKey, tuple[int, ...]]]:
    """Per node, the GPU indices each pod holds by the DCGM exporter's ``pod``/``namespace`` labels."""
    out: dict[str, dict[PodKey, set[int]]] = {}
    for g in metrics.gpus.values() if metrics is not None else ():
        if g.holder is not None and g.node:
            out.setdefault(g.node, {}).setdefault((g.holder[0], g.holder[1]), set()).add(g.index)
    return {node: {pk: tuple(sorted(ix)) for pk, ix in pods.items()} for node, pods in out.items()}


class GpuMapCache:
    """:func:`~hpctop.tui.gpumap.build_gpu_map`, patched from what changed since the last snapshot.

    Why (issue 16, K1): the tick worker builds the map on every tick, and a pass over every node
    (each node's pods sorted and looked up, every job's pods folded into ``active_job_of``) was
    ~310 ms CPU per tick at 50k pods while a few dozen nodes had changed. Here the previous
    snapshot's maps are compared with the new one's by position (:mod:`hpctop.tui.diffmap`): the
    pods that are other objects and differ in what the map reads (node, phase, requests, device
    indices), the jobs that are other objects (the kept pod → active job map patched from them),
    the nodes and per-node pod sets that are other objects. Only the nodes those touch are built
    again (by :func:`~hpctop.tui.gpumap.node_gpus`, the function ``build_gpu_map`` runs per node,
    so the result is the same), and a rebuilt node equal to its old :class:`NodeGpus` keeps the
    old object; when none differs, the previous :class:`GpuMap` object is returned, so the pane
    neither reformats nor repaints. A change the patch does not follow (the partitions, the set
    of nodes, the DCGM holders, a job map whose order moved, two active jobs naming one pod)
    makes a full build, which also keeps every equal node's old object.
    """

    def __init__(self) -> None:
        #: per node, GPU indices per pod from DCGM's holder labels (:meth:`set_devices`)
        self._devices: dict[str, dict[PodKey, tuple[int, ...]]] = {}
        self._last: tuple[Snapshot, list[tuple[str, Iterable[str]]]] | None = None
        self._map = GpuMap([], [], [])
        self._version: int | None = None
        self._lock = threading.Lock()
        self._job_of: dict[PodKey, Job] = {}
        self._part_of: dict[str, str] = {}
        self._at: dict[str, int] = {}  # node name -> its place in ``_map.nodes``
        #: some pod is named by two active jobs (``active_job_of`` keeps the later): no patching
        self._shared = False
        #: nodes rebuilt by the last :meth:`build` (tests and benchmarks read it)
        self.rebuilt = 0
        #: whether the last build was a full one (tests read it)
        self.full = True

    def build(self, snapshot: Snapshot, partitions: Iterable[PartitionStatus]) -> GpuMap:
        with self._lock:  # the tick worker and the UI thread may both ask
            if snapshot.version == self._version:
                return self._map
            spec: list[tuple[str, Iterable[str]]] = [(p.name, p.nodes) for p in partitions]
            patched = self._patch(snapshot, spec) if self._last is not None else None
            self._map = patched if patched is not None else self._full(snapshot, spec)
            self._last = (snapshot, spec)
            self._version = snapshot.version
            return self._map

    def set_devices(self, devices: dict[str, dict[PodKey, tuple[int, ...]]]) -> GpuMap | None:
        """New DCGM holder indices: the map rebuilt with them (its changed nodes only), None if same."""
        with self._lock:
            if devices == self._devices:
                return None
            self._devices = devices
            if self._last is None:
                return None
            self._map = self._full(*self._last)
            return self._map

    def _full(self, snap: Snapshot, partition_nodes: list[tuple[str, Iterable[str]]]) -> GpuMap:
        """Every node built; a node equal to its old :class:`NodeGpus` keeps the old object."""
        self.full = True
        job_of = active_job_of(snap.jobs)
        self._shared = len(job_of) != sum(len(j.pods) for j in snap.jobs.values() if j.state.is_active)
        order, part_of = node_order(snap.nodes, partition_nodes)
        old = {ng.name: ng for ng in self._map.nodes}
        out: list[NodeGpus] = []
        at: dict[str, int] = {}
        same = True
        for name in order:
            ng = node_gpus(
                name,
                snap.nodes[name],
                part_of.get(name, "other"),
                snap.pods,
                snap.pods_by_node,
                job_of,
                self._devices,
            )
            if ng is None:
                continue
            kept = old.get(ng.name)
            if kept is not None and kept == ng:
                ng = kept
            if len(out) >= len(self._map.nodes) or self._map.nodes[len(out)] is not ng:
                same = False
            at[name] = len(out)
            out.append(ng)
        self.rebuilt = len(out)
        self._job_of, self._part_of, self._at = job_of, part_of, at
        if same and len(out) == len(self._map.nodes):
            return self._map
        return with_totals(out)

    def _patch(self, snap: Snapshot, partition_nodes: list[tuple[str, Iterable[str]]]) -> GpuMap | None:
        """The map patched at the nodes that changed since the last build, or None (do a full one)."""
        assert self._last is not None
        last, last_spec = self._last
        if partition_nodes != last_spec or self._shared:
            return None
        dirty: set[str] = set()
        if snap.nodes is not last.nodes:
            if snap.nodes.keys() != last.nodes.keys():
                return None  # a node came or went: the order changes
            old_nodes = last.nodes
            for name, node in snap.nodes.items():
                before = old_nodes[name]
                if before is not node:
                    if (before.gpu.count > 0) != (node.gpu.count > 0):
                        return None  # a node joins or leaves the map
                    dirty.add(name)
        if snap.pods_by_node is not last.pods_by_node:
            old_sets, new_sets = last.pods_by_node, snap.pods_by_node
            for name in self._at:
                had, has = old_sets.get(name), new_sets.get(name)
                if had is not has and had != has:
                    dirty.add(name)
        if not self._changed_pods(last.pods, snap.pods, dirty):
            return None
        if not self._changed_jobs(last.jobs, snap.jobs, snap.pods, dirty):
            return None
        self.full = False
        nodes = list(self._map.nodes)
        rebuilt = 0
        pairs: list[tuple[NodeGpus, NodeGpus]] = []
        for name in dirty:
            i = self._at.get(name)
            if i is None:
                continue  # a node without GPUs: not on the map
            ng = node_gpus(
                name,
                snap.nodes[name],
                self._part_of.get(name, "other"),
                snap.pods,
                snap.pods_by_node,
                self._job_of,
                self._devices,
            )
            assert ng is not None  # its GPU count stayed above 0 (checked above)
            rebuilt += 1
            if ng != nodes[i]:
                pairs.append((nodes[i], ng))
                nodes[i] = ng
        self.rebuilt = rebuilt
        return with_nodes_replaced(self._map, nodes, pairs) if pairs else self._map

    def _changed_pods(self, old: Mapping[PodKey, Pod], new: Mapping[PodKey, Pod], dirty: set[str]) -> bool:
        """Adds the nodes of pods that changed what the map reads; False when the pods map is not
        the old one with values replaced, keys deleted or added (:func:`diff`)."""
        if new is old:
            return True
        d = diff(old, new)
        if d is None:
            return False
        _, before = listed(old)
        for i in d.deleted:
            pod = before[i]
            if pod.node_name is not None:
                dirty.add(pod.node_name)
        kept, values = d.kept, d.values
        for i in d.replaced:
            a, b = kept[i], values[i]
            if (
                a.node_name != b.node_name
                or a.phase != b.phase
                or a.requests != b.requests
                or a.gpu_indices != b.gpu_indices
            ):
                for name in (a.node_name, b.node_name):
                    if name is not None:
                        dirty.add(name)
        for i in d.appended:
            name = values[i].node_name
            if name is not None:
                dirty.add(name)
        return True

    def _changed_jobs(
        self,
        old: Mapping[JobKey, Job],
        jobs: Mapping[JobKey, Job],
        pods: Mapping[PodKey, Pod],
        dirty: set[str],
    ) -> bool:
        """Patches the pod → active job map from the jobs that are other objects and adds the
        nodes of pods whose holder shows differently; False when it cannot be patched exactly."""
        if jobs is old:
            return True
        d = diff(old, jobs)
        if d is None:
            return False
        _, before = listed(old)
        kept, values = d.kept, d.values
        gone = [before[i] for i in d.deleted]
        came = [values[i] for i in d.appended]
        for i in d.replaced:
            a, b = kept[i], values[i]
            # most re-derived jobs (a pod's restart count) hold the same pods and show the same:
            # the map keeps the old object, whose id and queue are what a cell shows
            if (
                (a.pods is b.pods or a.pods == b.pods)
                and a.state.is_active == b.state.is_active
                and a.queue == b.queue
                and a.id == b.id
            ):
                continue
            gone.append(a)
            came.append(b)
        job_of = self._job_of
        shown: dict[PodKey, tuple[str, str | None] | None] = {}
        for old_job in gone:
            if old_job.state.is_active:
                key = old_job.key
                for pk in old_job.pods:
                    holder = job_of.get(pk)
                    if holder is not None and holder.key == key:
                        shown.setdefault(pk, _shows(holder))
                        del job_of[pk]
        for job in came:
            if job.state.is_active:
                for pk in job.pods:
                    other = job_of.get(pk)
                    if other is not None and other.key != job.key:
                        return False  # two active jobs name this pod: which one shows is order-bound
                    shown.setdefault(pk, _shows(other))
                    job_of[pk] = job
        for pk, was in shown.items():
            if was != _shows(job_of.get(pk)):
                pod = pods.get(pk)
                if pod is not None and pod.node_name is not None:
                    dirty.add(pod.node_name)
        return True


def _shows(job: Job | None) -> tuple[str, str | None] | None:
    """What a GPU cell shows of its holding job (:func:`~hpctop.tui.gpumap.node_gpus`)."""
    return None if job is None else (job.id, job.queue)


class GpuPane(ScrollView, can_focus=True):
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = list(bindings("gpus"))

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.map = GpuMap([], [], [])
        self.zoom = "cluster"
        self.cursor = 0
        self.queues: list[str] = []
        self._palette = Palette()
        self._lines: list[list[Segment]] = []
        self._cursor_line = 0
        #: per formatted line: (first cell, end cell, "node" | "partition", node index or partition name)
        self._hits: list[list[tuple[int, int, str, int | str]]] = []
        self.metrics: MetricsView | None = None  # DCGM telemetry (live with --prometheus only)
        self.maps = GpuMapCache()
        #: DRA's device taints and health (None: no DRA on this cluster), for the node zoom
        self.dra: DraView | None = None

    def map_for(self, snapshot: Snapshot, partitions: Iterable[PartitionStatus]) -> GpuMap:
        """The GPU map of ``snapshot`` (any thread): the one :meth:`prepare` built, or built now."""
        self.dra = snapshot.dra
        return self.maps.build(snapshot, partitions)

    def prepare(self, snapshot: Snapshot, partitions: Iterable[PartitionStatus]) -> None:
        """Build the map of ``snapshot`` ahead of its publish (the tick worker calls this)."""
        self.dra = snapshot.dra
        self.maps.build(snapshot, partitions)

    def set_metrics(self, metrics: MetricsView | None) -> None:
        """Telemetry for the node zoom; rebuilt only when a new poll arrived (a reference swap).

        The exporter's per-GPU holder labels place pods that name no device on their GPU."""
        if metrics is not self.metrics:
            self.metrics = metrics
            remapped = self.maps.set_devices(dcgm_devices(metrics))
            if remapped is not None:
                self.set_map(remapped, self.queues)
            elif self.zoom == "node":
                self.rebuild()

    def _metrics_text(self, node: str, index: int) -> str:
        """`` util 87% mem 40/80G 612W 71C`` for one GPU (MIG: one part per instance), "" without data."""
        if self.metrics is None:
            return ""
        parts = []
        for g in self.metrics.gpus.values():
            if g.node != node or g.index != index:
                continue
            busy = g.busy_pct
            text = f"{g.mig_profile or ''} util {busy:.0f}%" if busy is not None else "util -"
            if g.fb_used_mib is not None and g.fb_total_mib:
                text += f" mem {g.fb_used_mib / 1024:.0f}/{g.fb_total_mib / 1024:.0f}G"
            if g.power_w is not None:
                text += f" {g.power_w:.0f}W"
            if g.temp_c is not None:
                text += f" {g.temp_c:.0f}C"
            if g.last_xid:
                text += f" XID {g.last_xid}"
            parts.append(text.strip())
        stale = " (stale)" if parts and self.metrics.stale else ""
        return ("  [" + "; ".join(sorted(parts)) + "]" + stale) if parts else ""

    def set_map(self, gpu_map: GpuMap, queues: list[str]) -> None:
        if gpu_map is self.map and queues == self.queues:
            return  # no node changed (GpuMapCache): nothing to reformat or repaint
        self.map = gpu_map
        self.queues = queues
        self.cursor = min(self.cursor, max(len(gpu_map.nodes) - 1, 0))
        self.rebuild()

    @property
    def current(self) -> NodeGpus | None:
        nodes = self.map.nodes
        return nodes[self.cursor] if 0 <= self.cursor < len(nodes) else None

    def cycle_zoom(self) -> str:
        self.zoom = ZOOMS[(ZOOMS.index(self.zoom) + 1) % len(ZOOMS)]
        self.scroll_to(y=0, animate=False, immediate=True)
        self.rebuild()
        return self.zoom

    def select_node(self, name: str) -> bool:
        for i, node in enumerate(self.map.nodes):
            if node.name == name:
                self.cursor = i
                self.rebuild()
                return True
        return False

    def action_move(self, delta: int) -> None:
        if self.map.nodes:
            self.cursor = max(0, min(self.cursor + delta, len(self.map.nodes) - 1))
            self.rebuild()

    def action_move_partition(self, delta: int) -> None:
        node = self.current
        names = self.map.partition_names()
        if node is None or not names:
            return
        target = names[(names.index(node.partition) + delta) % len(names)]
        for i, n in enumerate(self.map.nodes):
            if n.partition == target:
                self.cursor = i
                break
        self.rebuild()

    # -- formatting ------------------------------------------------------------------------------

    def _style(self, fg: str = "", bg: str = "", bold: bool = False, reverse: bool = False) -> Style:
        return self._palette.style(self.app, fg=fg, bg=bg, bold=bold, reverse=reverse)

    def _node_style(self, node: NodeGpus) -> Style:
        if node.down:
            return self._style("gpu-down")
        if node.used == 0:
            return self._style("gpu-free")
        return self._style(queue_var(node.dominant_queue, self.queues))

    def _totals_lines(self, width: int) -> list[tuple[list[Segment], list[tuple[int, int, str, int | str]]]]:
        """Each partition's used/total, on as many lines as the pane's width needs: on one line
        that was cut, the partitions after T4 were not on screen at 120 columns."""
        out: list[tuple[list[Segment], list[tuple[int, int, str, int | str]]]] = []
        segs: list[Segment] = []
        hits: list[tuple[int, int, str, int | str]] = []
        x = 0
        label = self._style("primary", bold=True)
        dim = self._style("gpu-free")
        for group in self.map.partitions:
            item = [
                Segment(group.name, label),
                Segment(f" {_gpus(group.used)}/{_gpus(group.total)}", Style()),
            ]
            if group.down:
                item.append(Segment(f" {DOWN}{group.down}", self._style("gpu-down")))
            size = sum(seg.cell_length for seg in item)
            if segs and x + size > width:
                out.append((segs, hits))
                segs, hits, x = [], [], 0
            hits.append((x, x + cell_len(group.name), "partition", group.name))  # names sanitised in gpumap
            segs.extend(item)
            segs.append(Segment("  ", dim))
            x += size + 2
        out.append((segs, hits))
        return out

    def _models_line(self) -> list[Segment]:
        segs: list[Segment] = [Segment("models ", self._style("gpu-free"))]
        for group in self.map.models:
            segs.append(Segment(f"{group.name} {_gpus(group.used)}/{_gpus(group.total)}  ", Style()))
        return segs

    def rebuild(self) -> None:
        width = max(self.size.width, 20)
        lines: list[list[Segment]] = []
        hits: list[list[tuple[int, int, str, int | str]]] = []
        cursor_line = 0
        if self.zoom == "cluster":
            for segs, line_hits in self._totals_lines(width):
                lines.append(segs)
                hits.append(line_hits)
            row: list[Segment] = []
            row_hits: list[tuple[int, int, str, int | str]] = []
            used = 0
            last_part = None
            for i, node in enumerate(self.map.nodes):
                if last_part is not None and node.partition != last_part:
                    if used + 1 > width:
                        lines.append(row)
                        hits.append(row_hits)
                        row, row_hits, used = [], [], 0
                    row.append(Segment("│", self._style("panel")))
                    used += 1
                last_part = node.partition
                if used + 1 > width:
                    lines.append(row)
                    hits.append(row_hits)
                    row, row_hits, used = [], [], 0
                style = self._node_style(node)
                if i == self.cursor:
                    style = style + Style(reverse=True)
                    cursor_line = len(lines)
                row.append(Segment(node.glyph(), style))
                row_hits.append((used, used + 1, "node", i))
                used += 1
            if row:
                lines.append(row)
                hits.append(row_hits)
        elif self.zoom == "partition":
            cur = self.current
            part = cur.partition if cur else ""
            group = next((g for g in self.map.partitions if g.name == part), None)
            head = self._style("primary", bold=True)
            if group is not None:
                head_segs = [
                    Segment(part, head),
                    Segment(f"  {_gpus(group.used)}/{_gpus(group.total)} GPUs, {group.nodes} nodes", Style()),
                    Segment(
                        f"  {DOWN} {group.down} down/cordoned" if group.down else "",
                        self._style("gpu-down"),
                    ),
                ]
                # the other partitions' names after the current one's figures: click one to show it;
                # names that do not fit the pane's width go on the next line (at 80 columns the pane
                # is 40 cells: one line cut them off)
                head_hits: list[tuple[int, int, str, int | str]] = []
                x = sum(seg.cell_length for seg in head_segs) + 2
                head_segs.append(Segment("  ", Style()))
                for other in self.map.partition_names():
                    if other != part:
                        w = cell_len(other)
                        if x + 1 + w > width and x > 1:  # x > 1: the line holds something
                            hits.append(head_hits)
                            lines.append(head_segs)
                            head_segs, head_hits, x = [Segment(" ")], [], 1
                        head_hits.append((x + 1, x + 1 + w, "partition", other))
                        head_segs += [Segment(" "), Segment(other, self._style("gpu-free", bold=True))]
                        x += 1 + w
                hits.append(head_hits)
                lines.append(head_segs)
            widths = (cell_len(n.name) for n in self.map.nodes if n.partition == part)
            name_w = min(max(widths, default=8), 64)
            for i, n in enumerate(self.map.nodes):
                if n.partition != part:
                    continue
                is_cur = i == self.cursor
                if is_cur:
                    cursor_line = len(lines)
                name_style = self._style(bold=True, reverse=True) if is_cur else Style()
                segs = [Segment(fit_cells(n.name, name_w), name_style), Segment(" ")]
                segs.extend(self._slot_segments(n))
                figures = n.gpu_text() if n.shares or n.mig else f"{_gpus(n.used)}/{_gpus(n.total)}"
                segs.append(Segment(f" {figures}", Style()))
                if n.down:
                    segs.append(Segment(" down" if not n.ready else " cordoned", self._style("gpu-down")))
                hits.append([(0, width, "node", i)])
                lines.append(segs)
        else:
            sel = self.current
            if sel is not None:
                node = sel
                state = "ready" if node.ready else "NOT READY"
                if node.cordoned:
                    state += ", cordoned"
                lines.append(
                    [
                        Segment(node.name, self._style("primary", bold=True)),
                        Segment(f"  {node.model}  partition {node.partition}  {state}  ", Style()),
                        Segment(node.gpu_text(), Style()),
                    ]
                )
                hits.append([(0, width, "node", self.cursor)])
                health = gpu_health(self.dra, node.name)
                if health:  # DRA: tainted devices, devices a pod's status reports unwell
                    lines.append(
                        [
                            Segment(
                                sanitize_display("GPU health: " + "; ".join(health)), self._style("gpu-down")
                            )
                        ]
                    )
                    hits.append([])
                if node.unplaced:
                    where = ", ".join(f"{j} ({q or '-'}, {g:g})" for j, q, g in node.unplaced)
                    lines.append(
                        [
                            Segment(
                                "holders unknown per GPU (no device index; --prometheus maps them)", Style()
                            ),
                            Segment(f"; on this node: {where}", Style()),
                        ]
                    )
                    hits.append([])
                for idx, slot in enumerate(node.slots):
                    glyph = self._slot_glyph(node, slot.used)
                    style = self._slot_style(node, slot.used, slot.queue)
                    holders = ", ".join(f"{j} ({q or '-'}, {g:g})" for j, q, g in slot.holders) or "free"
                    line = [Segment(f"GPU{idx:<2} "), Segment(glyph * 2, style), Segment(f" {holders}")]
                    telemetry = self._metrics_text(node.name, idx)
                    if telemetry:
                        line.append(Segment(sanitize_display(telemetry), self._style("gpu-free")))
                    lines.append(line)
        self._lines = lines
        self._hits = hits
        self._cursor_line = cursor_line
        self.virtual_size = Size(width, len(lines))
        top = int(self.scroll_y)
        height = max(self.size.height, 1)
        if cursor_line < top or cursor_line >= top + height:
            self.scroll_to(y=max(cursor_line - height // 2, 0), animate=False, immediate=True)
        self.refresh()

    def _slot_glyph(self, node: NodeGpus, used: int) -> str:
        if not node.ready:
            return DOWN
        if node.cordoned and used == 0:
            return CORDONED
        return fill_glyph(used)

    def _slot_style(self, node: NodeGpus, used: int, queue: str) -> Style:
        if node.down and used == 0:
            return self._style("gpu-down")
        if used == 0:
            return self._style("gpu-free")
        return self._style(queue_var(queue, self.queues))

    def _slot_segments(self, node: NodeGpus) -> list[Segment]:
        return [
            Segment(self._slot_glyph(node, s.used), self._slot_style(node, s.used, s.queue))
            for s in node.slots
        ]

    def on_resize(self) -> None:
        self.rebuild()

    # -- mouse -----------------------------------------------------------------------------------

    def hit_at(self, x: int, y: int) -> tuple[str, int | str] | None:
        """What is drawn at content cell (x, y): ``("node", index)``, ``("partition", name)`` or None."""
        index = int(self.scroll_y) + y
        if not 0 <= index < len(self._hits):
            return None
        for start, end, kind, value in self._hits[index]:
            if start <= x < end:
                return kind, value
        return None

    def show_partition(self, name: str) -> None:
        """The partition zoom on ``name`` (its first node selected)."""
        for i, node in enumerate(self.map.nodes):
            if node.partition == name:
                self.cursor = i
                break
        else:
            return
        if self.zoom != "partition":
            self.zoom = "partition"
            self.scroll_to(y=0, animate=False, immediate=True)
        self.rebuild()

    def on_click(self, event: events.Click) -> None:
        """Click selects a node or shows a partition; a double click on a node zooms to it."""
        self.focus()
        offset = event.get_content_offset(self)
        hit = None if offset is None else self.hit_at(offset.x, offset.y)
        if hit is None:
            return
        kind, value = hit
        if kind == "partition" and isinstance(value, str):
            self.show_partition(value)
        elif isinstance(value, int):
            self.cursor = value
            if event.chain >= 2 and self.zoom != "node":
                self.zoom = "node"
                self.scroll_to(y=0, animate=False, immediate=True)
            self.rebuild()

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_y) + y
        width = self.size.width
        if 0 <= index < len(self._lines):
            return Strip(self._lines[index]).extend_cell_length(width).crop(0, width)
        return Strip.blank(width, self.rich_style)

    def line_count(self) -> int:
        return len(self._lines)
