"""GPU telemetry from the DCGM exporter, joined to hpctop's nodes and pods (SCHEDULERS.md §3.5).

Why a model of its own rather than fields on :class:`~hpctop.model.objects.Node`: metrics arrive on
another clock (a Prometheus scrape, every few seconds) from another system that may be missing or
down, while nodes and pods come from watches. Keeping them apart means a Prometheus outage can
never hold up or corrupt the cluster view: the console shows the last metrics marked stale, and
the scheduling core never sees them at all.

The join is the part with traps, and it lives here (pure, no I/O) so it can be tested on plain
label dicts:

- the host label is ``Hostname`` (old) or ``hostname`` (current), and without host networking it
  holds the exporter *pod's* name, which is joined through that pod's ``spec.nodeName``; a label
  that is neither a node nor a known pod falls back to the scrape ``instance`` (the exporter pod's
  IP) when the caller knows the IPs, else is kept as it is, so the GPU is still listed;
- the holder pod comes in three spellings: ``exported_pod``/``exported_namespace`` (Prometheus
  ``honor_labels: false``, where plain ``pod`` names the *exporter*), ``pod_name``/``pod_namespace``
  (``--use-old-namespace``) and ``pod``/``namespace``; they are tried in that order, and a ``pod``
  that is the exporter itself means no holder;
- ``DCGM_FI_DEV_GPU_UTIL`` is 0 on MIG instances, so :attr:`GpuMetrics.busy_pct` prefers
  ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` (a 0–1 ratio) whenever the exporter has it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

#: gauge → GpuMetrics field it fills (the instant queries hpctop asks Prometheus for)
METRIC_FIELDS: dict[str, str] = {
    "DCGM_FI_DEV_GPU_UTIL": "util_pct",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "gr_engine_active",
    "DCGM_FI_DEV_FB_USED": "fb_used_mib",
    "DCGM_FI_DEV_FB_FREE": "fb_free_mib",
    "DCGM_FI_DEV_POWER_USAGE": "power_w",
    "DCGM_FI_DEV_GPU_TEMP": "temp_c",
    "DCGM_FI_DEV_XID_ERRORS": "last_xid",
}

#: label pairs naming the pod that holds a GPU, most specific first (see module doc)
POD_LABELS: tuple[tuple[str, str, str], ...] = (
    ("exported_pod", "exported_namespace", "exported_container"),
    ("pod_name", "pod_namespace", "container_name"),
    ("pod", "namespace", "container"),
)

#: how long a label value may be; they are cluster strings and are sanitised again for display
LABEL_CAP = 253

#: (node, GPU index, MIG GPU instance id or None)
GpuKey = tuple[str, int, str | None]


@dataclass(frozen=True, slots=True)
class Sample:
    """One element of a Prometheus instant vector: the metric name, its labels, its value."""

    metric: str
    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True, slots=True)
class GpuMetrics:
    """The latest telemetry of one GPU, or one MIG instance of it."""

    node: str
    index: int
    mig_instance: str | None = None
    mig_profile: str | None = None
    uuid: str = ""
    model: str = ""
    util_pct: float | None = None
    gr_engine_active: float | None = None  # ratio 0-1 (profiling metrics need DCP)
    fb_used_mib: float | None = None
    fb_free_mib: float | None = None
    power_w: float | None = None
    temp_c: float | None = None
    last_xid: int | None = None  # 0: no XID since the exporter started
    holder: tuple[str, str, str] | None = None  # (namespace, pod, container)

    @property
    def key(self) -> GpuKey:
        return (self.node, self.index, self.mig_instance)

    @property
    def busy_pct(self) -> float | None:
        """How busy the GPU is, 0-100: GR engine activity when known (the only signal on MIG), else util."""
        if self.gr_engine_active is not None:
            return max(0.0, min(self.gr_engine_active * 100.0, 100.0))
        if self.util_pct is not None:
            return max(0.0, min(self.util_pct, 100.0))
        return None

    @property
    def fb_total_mib(self) -> float | None:
        if self.fb_used_mib is None or self.fb_free_mib is None:
            return None
        return self.fb_used_mib + self.fb_free_mib


@dataclass(frozen=True, slots=True)
class MetricsView:
    """What the console reads: the joined GPUs of the last good scrape and whether it is stale.

    ``updated_at`` is the wall-clock time of the last successful query (None: never);
    ``failing_since`` is set while queries fail, ``error`` says why (one short line).
    """

    gpus: Mapping[GpuKey, GpuMetrics] = field(default_factory=dict)
    updated_at: float | None = None
    failing_since: float | None = None
    error: str = ""
    skipped: int = 0  # samples that could not be joined (no GPU index, no host)

    @property
    def stale(self) -> bool:
        return self.failing_since is not None

    def note(self, now: float) -> str:
        """The status-bar phrase: empty while fresh, ``GPU metrics stale 42s (why)`` while failing."""
        if self.failing_since is None:
            return ""
        since = self.updated_at if self.updated_at is not None else self.failing_since
        age = max(now - since, 0.0)
        return (
            f"GPU metrics stale {age:.0f}s ({self.error})" if self.error else f"GPU metrics stale {age:.0f}s"
        )

    def on_node(self, node: str) -> list[GpuMetrics]:
        return sorted((g for g in self.gpus.values() if g.node == node), key=_order)

    def of_pod(self, namespace: str, pod: str) -> list[GpuMetrics]:
        return sorted(
            (g for g in self.gpus.values() if g.holder is not None and g.holder[:2] == (namespace, pod)),
            key=_order,
        )

    def failed(self, now: float, error: str) -> MetricsView:
        """The same GPUs, marked stale since the first failure of a run of failures."""
        since = self.failing_since if self.failing_since is not None else now
        return replace(self, failing_since=since, error=error[:200])


def _order(g: GpuMetrics) -> tuple[int, str]:
    return (g.index, g.mig_instance or "")


def _label(labels: Mapping[str, str], *names: str) -> str:
    for name in names:
        value = labels.get(name)
        if value:
            return value[:LABEL_CAP]
    return ""


def _is_exporter(pod: str, host: str) -> bool:
    """Whether a ``pod`` label names the exporter rather than a holder (``honor_labels: false``)."""
    return pod == host or "dcgm-exporter" in pod


def holder_of(labels: Mapping[str, str], host: str = "") -> tuple[str, str, str] | None:
    """The (namespace, pod, container) holding the GPU, from whichever spelling the labels use."""
    for pod_label, ns_label, container_label in POD_LABELS:
        pod = labels.get(pod_label, "")
        if not pod:
            continue
        if pod_label == "pod" and _is_exporter(pod, host):
            return None
        ns = labels.get(ns_label, "")
        return (ns[:LABEL_CAP], pod[:LABEL_CAP], labels.get(container_label, "")[:LABEL_CAP])
    return None


def node_of(
    labels: Mapping[str, str],
    nodes: Iterable[str] | Mapping[str, object],
    pod_nodes: Mapping[str, str],
    ip_nodes: Mapping[str, str] | None = None,
) -> str:
    """The node a sample is about: the host label if it names a node, else the exporter pod's node.

    ``pod_nodes`` maps pod names to their node (for a host label holding the exporter pod's name),
    ``ip_nodes`` pod IPs to their node (for the ``instance`` label); "" when nothing names a host.
    """
    host = _label(labels, "Hostname", "hostname")
    if host and host in nodes:
        return host
    if host and host in pod_nodes:
        return pod_nodes[host]
    instance = labels.get("instance", "")
    if ip_nodes and instance:
        ip = instance.rsplit(":", 1)[0].strip("[]")
        if ip in ip_nodes:
            return ip_nodes[ip]
    return host


def join_samples(
    samples: Iterable[Sample],
    nodes: Iterable[str] | Mapping[str, object],
    pod_nodes: Mapping[str, str] | None = None,
    ip_nodes: Mapping[str, str] | None = None,
) -> tuple[dict[GpuKey, GpuMetrics], int]:
    """Fold samples of the gauges in :data:`METRIC_FIELDS` into one :class:`GpuMetrics` per GPU.

    Returns the GPUs and how many samples were skipped (no GPU index, no host, unknown metric).
    ``nodes`` is tested with ``in`` only, so a snapshot's node mapping can be passed as it is.
    """
    pod_nodes = pod_nodes or {}
    out: dict[GpuKey, GpuMetrics] = {}
    skipped = 0
    for s in samples:
        name = METRIC_FIELDS.get(s.metric)
        if name is None or math.isnan(s.value) or math.isinf(s.value):
            skipped += 1
            continue
        labels = s.labels
        node = node_of(labels, nodes, pod_nodes, ip_nodes)
        try:
            index = int(labels.get("gpu", ""))
        except ValueError:
            skipped += 1
            continue
        if not node:
            skipped += 1
            continue
        mig = labels.get("GPU_I_ID") or None
        key: GpuKey = (node, index, mig[:LABEL_CAP] if mig else None)
        gpu = out.get(key)
        if gpu is None:
            profile = labels.get("GPU_I_PROFILE") or None
            gpu = GpuMetrics(
                node=node,
                index=index,
                mig_instance=key[2],
                mig_profile=profile[:LABEL_CAP] if profile else None,
                uuid=labels.get("UUID", "")[:LABEL_CAP],
                model=labels.get("modelName", "")[:LABEL_CAP],
            )
        value: float | int = int(s.value) if name == "last_xid" else s.value
        changes: dict[str, object] = {name: value}
        if gpu.holder is None:
            holder = holder_of(labels, _label(labels, "Hostname", "hostname"))
            if holder is not None:
                changes["holder"] = holder
        out[key] = replace(gpu, **changes)  # type: ignore[arg-type]
    return out, skipped


__all__ = [
    "METRIC_FIELDS",
    "POD_LABELS",
    "GpuKey",
    "GpuMetrics",
    "MetricsView",
    "Sample",
    "holder_of",
    "join_samples",
    "node_of",
]
