"""Scenario files: a small cluster, its policy and a workload, written by hand in TOML.

A scenario is what a person writes to reproduce a situation ("four DGX nodes, two queues, a
gang that cannot fit") without a cluster. It is parsed with :mod:`tomllib`, validated with
pydantic, and turned into plain frozen specs the simulator consumes and a
:class:`~hpctop.model.policy.Policy` the scheduling core consumes, so a file and the demo trace
(:mod:`hpctop.sources.simulator.trace`) reach the simulator through the same :class:`Scenario`.

Errors must be fixable from the message alone: every :class:`ScenarioError` names the field
(``jobs[2].per_member.memory``), the job or node group by name when there is one, and the line
of the file (best effort: TOML parsers give no positions after parsing, so the line is found by
counting ``[[jobs]]`` headers and looking for the key below the right one).

Units follow the model (:mod:`hpctop.model.resources`): ``gpu`` is in milli-GPU once loaded
(``gpu = 16`` in a quota is 16000; ``gpu = 0.25`` in a job is a quarter of one GPU), CPU in
millicores and memory in bytes; quantities are Kubernetes strings (``"32"``, ``"500m"``,
``"256Gi"``) or plain numbers.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from hpctop.errors import QuantityError, ScenarioError
from hpctop.model.policy import (
    DEFAULT_QUEUE,
    PartitionSpec,
    PartitionState,
    Policy,
    PriorityWeights,
    QueueSpec,
    QueueState,
)
from hpctop.model.quantity import to_int, to_milli
from hpctop.model.resources import Resources

#: MiB of memory per GPU by model, for the ``nvidia.com/gpu.memory`` label (plausible values; the
#: trace's own model names G2/G3 are Alibaba-internal and get a guess).
GPU_MEMORY_MIB: dict[str, int] = {
    "H200": 143771,
    "H100": 81559,
    "B200": 183359,
    "A100": 81920,
    "A100-40GB": 40960,
    "L40S": 46068,
    "L4": 23034,
    "A10": 23028,
    "T4": 15360,
    "P100": 16280,
    "V100M16": 16160,
    "V100M32": 32510,
    "G2": 32768,
    "G3": 49152,
}
DEFAULT_GPU_MEMORY_MIB = 16384

Quantity = str | int | float


def _quantity_checker(parse: Any) -> Any:
    def check(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(f"{value!r} is not a quantity (examples: 500m, 2, 80Gi)")
        try:
            parse(value)
        except QuantityError as exc:
            raise ValueError(exc.detail) from None
        return value

    return check


CpuQuantity = Annotated[Quantity, BeforeValidator(_quantity_checker(to_milli))]
MemQuantity = Annotated[Quantity, BeforeValidator(_quantity_checker(to_int))]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ResourceMap(_Model):
    """``{gpu = 8, cpu = "32", memory = "256Gi"}``: GPUs (may be a fraction below 1), CPUs, memory."""

    gpu: float = Field(default=0, ge=0)
    cpu: CpuQuantity = 0
    memory: MemQuantity = 0

    def to_resources(self) -> Resources:
        return Resources(to_milli(self.cpu), to_int(self.memory), round(self.gpu * 1000))


class TaintModel(_Model):
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class TolerationModel(_Model):
    key: str | None = None
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None


class NodeGroupModel(_Model):
    name: str = Field(min_length=1, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    count: int = Field(default=1, ge=1, le=100_000)
    gpus: int = Field(default=0, ge=0, le=64)
    gpu_model: str | None = None
    gpu_memory: int | None = Field(default=None, ge=1, description="MiB per GPU")
    cpu: CpuQuantity
    memory: MemQuantity
    max_pods: int = Field(default=110, ge=1)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[TaintModel] = Field(default_factory=list)
    ready: bool = True
    unschedulable: bool = False

    @model_validator(mode="after")
    def _gpu_model_needs_gpus(self) -> NodeGroupModel:
        if self.gpus and not self.gpu_model:
            raise ValueError("gpu_model is required when gpus > 0")
        return self


class PartitionModel(_Model):
    """A partition; its two Slurm numbers are explained in docs/scheduler.md ("Partition tiers").

    ``evaluation_tier`` is Slurm's PriorityTier (higher tiers are evaluated first, whatever the
    job priority); ``priority_job_factor`` is Slurm's PriorityJobFactor (the partition factor of
    the priority). ``priority_tier`` is hpctop's older field and means the PriorityJobFactor (what
    it always did); give one of ``priority_tier`` and ``priority_job_factor``, not both.
    """

    name: str = Field(min_length=1)
    selector: dict[str, str] = Field(default_factory=dict)
    priority_tier: int | None = Field(default=None, ge=0)
    priority_job_factor: int | None = Field(default=None, ge=0, le=65533)
    evaluation_tier: int = Field(default=1, ge=0, le=65533)
    state: PartitionState = PartitionState.UP
    cpu_only: bool = False

    @model_validator(mode="after")
    def _one_factor(self) -> PartitionModel:
        if self.priority_tier is not None and self.priority_job_factor is not None:
            raise ValueError(
                "priority_tier is the older name of priority_job_factor (Slurm's PriorityJobFactor): "
                "give one of them; Slurm's PriorityTier (evaluation order) is evaluation_tier"
            )
        return self


class QueueModel(_Model):
    path: str = Field(pattern=r"^root(\.[A-Za-z0-9_-]+)*$")
    guaranteed: ResourceMap = Field(default_factory=ResourceMap)
    max: ResourceMap | None = None
    state: QueueState = QueueState.OPEN


_WEIGHTS = PriorityWeights()


class PriorityModel(_Model):
    weight_age: int = Field(default=_WEIGHTS.age, ge=0)
    weight_fairshare: int = Field(default=_WEIGHTS.fairshare, ge=0)
    weight_jobsize: int = Field(default=_WEIGHTS.jobsize, ge=0)
    weight_partition: int = Field(default=_WEIGHTS.partition, ge=0)
    weight_qos: int = Field(default=_WEIGHTS.qos, ge=0)
    max_age: int = Field(default=_WEIGHTS.max_age, ge=1)


class PriorityClassModel(_Model):
    name: str = Field(min_length=1)
    value: int = Field(ge=-2_147_483_648, le=1_000_000_000)
    global_default: bool = False


class JobModel(_Model):
    name: str = Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    namespace: str = "default"
    queue: str = DEFAULT_QUEUE
    partition: str | None = None
    kind: Literal["batch", "service"] = "batch"
    submit: float = Field(default=0, ge=0)
    duration: float | None = Field(default=None, gt=0)
    time_limit: int | None = Field(default=None, gt=0)
    members: int = Field(default=1, ge=1, le=10_000)
    min_members: int | None = Field(default=None, ge=1)
    per_member: ResourceMap = Field(default_factory=ResourceMap)
    gpu_fraction: float | None = Field(default=None, gt=0, le=1)
    gpu_milli: int | None = Field(default=None, gt=0, le=1000)
    gpu_models: list[str] = Field(default_factory=list)
    tolerations: list[TolerationModel] = Field(default_factory=list)
    node_selector: dict[str, str] = Field(default_factory=dict)
    priority: int | None = None
    priority_class: str | None = None
    user: str | None = None
    held: bool = False
    fail: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    #: each member on its own node: Slurm's ``--nodes=N --ntasks-per-node=1`` for members smaller
    #: than a node (the pods get a required anti-affinity on ``kubernetes.io/hostname``)
    one_per_node: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> JobModel:
        if self.kind == "batch" and self.duration is None:
            raise ValueError("duration is required for batch jobs (seconds of run time)")
        if self.kind == "service" and self.held:
            raise ValueError("a service (Deployment) cannot be held; only batch jobs can (spec.suspend)")
        if self.min_members is not None and self.min_members > self.members:
            raise ValueError(f"min_members ({self.min_members}) is larger than members ({self.members})")
        gpu = self.per_member.gpu
        if gpu > 1 and gpu != int(gpu):
            raise ValueError(f"per_member.gpu = {gpu}: above one GPU only whole GPUs can be requested")
        if self.gpu_fraction is not None and self.gpu_milli is not None:
            raise ValueError("give gpu_fraction or gpu_milli, not both")
        return self


class SimulationModel(_Model):
    seed: int | None = None
    #: seconds a finished batch Job stays before it is deleted (Kubernetes ttlSecondsAfterFinished)
    ttl_after_finished: int | None = Field(default=None, ge=0)


class ScenarioModel(_Model):
    name: str | None = None
    description: str = ""
    nodes: list[NodeGroupModel] = Field(min_length=1)
    partitions: list[PartitionModel] = Field(default_factory=list)
    queues: list[QueueModel] = Field(default_factory=list)
    priority: PriorityModel = Field(default_factory=PriorityModel)
    priority_classes: list[PriorityClassModel] = Field(default_factory=list)
    simulation: SimulationModel = Field(default_factory=SimulationModel)
    jobs: list[JobModel] = Field(default_factory=list)


# -- what the simulator consumes -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One node of the simulated cluster."""

    name: str
    cpu: int  # millicores
    memory: int  # bytes
    gpus: int = 0
    gpu_model: str | None = None
    gpu_memory_mib: int | None = None
    max_pods: int = 110
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[tuple[str, str, str], ...] = ()  # (key, value, effect)
    ready: bool = True
    unschedulable: bool = False


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One submitted job: a batch Job of ``members`` pods, or an inference service (Deployment).

    ``gpu_count`` GPUs per member, each ``gpu_milli`` thousandths of a GPU (1000 = whole GPU; below
    1000 the member shares one GPU, as the trace's GPU-sharing tasks do).
    """

    name: str
    namespace: str
    queue: str
    submit: float
    duration: float | None  # None: runs until cancelled (services)
    members: int = 1
    min_members: int = 1
    cpu: int = 0
    memory: int = 0
    gpu_count: int = 0
    gpu_milli: int = 1000
    kind: str = "batch"  # batch | service
    partition: str | None = None
    gpu_models: tuple[str, ...] = ()
    priority_class: str | None = None
    priority: int | None = None
    time_limit: int | None = None
    user: str | None = None
    held: bool = False
    fail: bool = False
    labels: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[
        tuple[str | None, str, str | None, str | None], ...
    ] = ()  # key, operator, value, effect
    node_selector: tuple[tuple[str, str], ...] = ()
    one_per_node: bool = False

    @property
    def per_member(self) -> Resources:
        return Resources(self.cpu, self.memory, self.gpu_count * self.gpu_milli)


@dataclass(frozen=True, slots=True)
class PriorityClassSpec:
    name: str
    value: int
    global_default: bool = False


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    nodes: tuple[NodeSpec, ...]
    jobs: tuple[JobSpec, ...]
    policy: Policy
    priority_classes: tuple[PriorityClassSpec, ...] = ()
    description: str = ""
    seed: int | None = None
    ttl_after_finished: int | None = None
    notes: dict[str, Any] = field(default_factory=dict)


# -- loading -------------------------------------------------------------------------------------------


def load_scenario(path: Path | str) -> Scenario:
    """Read and validate a scenario file; raises :class:`ScenarioError` naming line and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_scenario(text, name=path.stem, source=str(path))


def parse_scenario(text: str, name: str = "scenario", source: str = "<scenario>") -> Scenario:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None
    try:
        model = ScenarioModel.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(_explain(exc, data, text, source)) from None
    return _build(model, data, text, source, name)


def _explain(exc: ValidationError, data: dict[str, Any], text: str, source: str) -> str:
    lines = []
    for error in exc.errors()[:5]:
        loc = tuple(error["loc"])
        where = _dotted(loc)
        subject = _subject(data, loc)
        line = _find_line(text, loc)
        prefix = f"{source}:{line}" if line else source
        msg = error["msg"].removeprefix("Value error, ")
        if error["type"] == "missing":
            msg = "required field is missing"
        elif error["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling)"
        lines.append(f"{prefix}: {where}{subject}: {msg}")
    more = len(exc.errors()) - 5
    if more > 0:
        lines.append(f"... and {more} more")
    return "\n".join(lines)


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _subject(data: dict[str, Any], loc: tuple[Any, ...]) -> str:
    if len(loc) >= 2 and isinstance(loc[1], int) and loc[0] in ("jobs", "nodes", "partitions", "queues"):
        items = data.get(str(loc[0]))
        if isinstance(items, list) and loc[1] < len(items) and isinstance(items[loc[1]], dict):
            label = items[loc[1]].get("name") or items[loc[1]].get("path")
            if isinstance(label, str):
                kind = {"jobs": "job", "nodes": "node group", "partitions": "partition", "queues": "queue"}
                return f" ({kind[str(loc[0])]} {label!r})"
    return ""


def _find_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line number of ``loc`` (``("jobs", 2, "per_member", "memory")``) in the TOML text."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if loc and isinstance(loc[0], str):
        table = loc[0]
        if len(loc) >= 2 and isinstance(loc[1], int):
            header = re.compile(rf"^\s*\[\[\s*{re.escape(table)}\s*\]\]")
            seen = -1
            found = None
            for i, line in enumerate(lines):
                if header.match(line):
                    seen += 1
                    if seen == loc[1]:
                        found = i
                        break
            if found is None:
                return None
            keys = loc[2:]
        else:
            header = re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]")
            found = next((i for i, line in enumerate(lines) if header.match(line)), None)
            if found is None:
                key = re.compile(rf"^\s*{re.escape(table)}\s*=")
                hit = next((i for i, line in enumerate(lines) if key.match(line)), None)
                return hit + 1 if hit is not None else None
            keys = loc[1:]
        start = found
        end = next(
            (i for i in range(found + 1, len(lines)) if lines[i].lstrip().startswith("[")),
            len(lines),
        )
        for part in keys:
            if not isinstance(part, str):
                continue
            pattern = re.compile(rf"(^|[\s{{,]){re.escape(part)}\s*=")
            hit = next((i for i in range(start, end) if pattern.search(lines[i])), None)
            if hit is None:
                break
            start = hit
        return start + 1
    return None


def _fail(text: str, source: str, loc: tuple[Any, ...], subject: str, message: str) -> ScenarioError:
    line = _find_line(text, loc)
    prefix = f"{source}:{line}" if line else source
    return ScenarioError(f"{prefix}: {_dotted(loc)}{subject}: {message}")


def _queue_tree(queues: list[QueueModel]) -> tuple[QueueSpec, ...]:
    specs: dict[str, QueueSpec] = {}
    for q in queues:
        specs[q.path] = QueueSpec(
            path=q.path,
            guaranteed=q.guaranteed.to_resources(),
            max=q.max.to_resources() if q.max is not None else None,
            state=q.state,
        )
    for path in list(specs):
        parts = path.split(".")
        for i in range(1, len(parts)):
            ancestor = ".".join(parts[:i])
            specs.setdefault(ancestor, QueueSpec(path=ancestor))
    return tuple(sorted(specs.values(), key=lambda s: s.path))


def _build(model: ScenarioModel, data: dict[str, Any], text: str, source: str, name: str) -> Scenario:
    nodes: list[NodeSpec] = []
    seen_nodes: set[str] = set()
    for gi, group in enumerate(model.nodes):
        labels = dict(group.labels)
        for i in range(group.count):
            node_name = f"{group.name}-{i}"
            if node_name in seen_nodes:
                raise _fail(
                    text,
                    source,
                    ("nodes", gi, "name"),
                    f" (node group {group.name!r})",
                    f"node {node_name!r} is defined twice",
                )
            seen_nodes.add(node_name)
            nodes.append(
                NodeSpec(
                    name=node_name,
                    cpu=to_milli(group.cpu),
                    memory=to_int(group.memory),
                    gpus=group.gpus,
                    gpu_model=group.gpu_model if group.gpus else None,
                    gpu_memory_mib=group.gpu_memory
                    or (
                        GPU_MEMORY_MIB.get(group.gpu_model or "", DEFAULT_GPU_MEMORY_MIB)
                        if group.gpus
                        else None
                    ),
                    max_pods=group.max_pods,
                    labels=tuple(sorted(labels.items())),
                    taints=tuple((t.key, t.value, t.effect) for t in group.taints),
                    ready=group.ready,
                    unschedulable=group.unschedulable,
                )
            )
    partitions = tuple(
        PartitionSpec(
            name=p.name,
            selector=tuple(sorted(p.selector.items())),
            priority_tier=p.priority_tier if p.priority_tier is not None else 1,
            priority_job_factor=p.priority_job_factor,
            evaluation_tier=p.evaluation_tier,
            state=p.state,
            cpu_only=p.cpu_only,
        )
        for p in model.partitions
    )
    partition_names = {p.name for p in partitions}
    queues = _queue_tree(model.queues)
    queue_paths = {q.path for q in queues}
    classes = {c.name: PriorityClassSpec(c.name, c.value, c.global_default) for c in model.priority_classes}
    jobs: list[JobSpec] = []
    seen_jobs: set[tuple[str, str]] = set()
    for ji, job in enumerate(model.jobs):
        subject = f" (job {job.name!r})"
        key = (job.namespace, job.name)
        if key in seen_jobs:
            raise _fail(
                text,
                source,
                ("jobs", ji, "name"),
                subject,
                f"another job is named {job.namespace}/{job.name}",
            )
        seen_jobs.add(key)
        if job.partition is not None and job.partition not in partition_names:
            known = ", ".join(sorted(partition_names)) or "none are defined"
            raise _fail(
                text,
                source,
                ("jobs", ji, "partition"),
                subject,
                f"unknown partition {job.partition!r} (defined: {known})",
            )
        if queue_paths and job.queue not in queue_paths and job.queue != DEFAULT_QUEUE:
            raise _fail(
                text,
                source,
                ("jobs", ji, "queue"),
                subject,
                f"unknown queue {job.queue!r} (defined: {', '.join(sorted(queue_paths))})",
            )
        if job.priority_class is not None and job.priority_class not in classes:
            if job.priority is None:
                raise _fail(
                    text,
                    source,
                    ("jobs", ji, "priority_class"),
                    subject,
                    f"unknown priority class {job.priority_class!r}; define it in [[priority_classes]] "
                    "or give priority = <value>",
                )
            classes[job.priority_class] = PriorityClassSpec(job.priority_class, job.priority)
        gpu = job.per_member.gpu
        if job.gpu_fraction is not None or job.gpu_milli is not None:
            milli = job.gpu_milli if job.gpu_milli is not None else round((job.gpu_fraction or 0) * 1000)
            count = max(int(gpu), 1) if gpu >= 1 else 1
        elif 0 < gpu < 1:
            milli, count = round(gpu * 1000), 1
        else:
            milli, count = 1000, int(gpu)
        per = job.per_member
        jobs.append(
            JobSpec(
                name=job.name,
                namespace=job.namespace,
                queue=job.queue,
                submit=job.submit,
                duration=job.duration,
                members=job.members,
                min_members=job.min_members or (job.members if job.kind == "batch" else 1),
                cpu=to_milli(per.cpu),
                memory=to_int(per.memory),
                gpu_count=count,
                gpu_milli=milli,
                kind=job.kind,
                partition=job.partition,
                gpu_models=tuple(job.gpu_models),
                priority_class=job.priority_class,
                priority=job.priority,
                time_limit=job.time_limit
                or (int(job.duration) + (job.duration > int(job.duration)) if job.duration else None),
                user=job.user,
                held=job.held,
                fail=job.fail,
                labels=tuple(sorted(job.labels.items())),
                tolerations=tuple((t.key, t.operator, t.value, t.effect) for t in job.tolerations),
                node_selector=tuple(sorted(job.node_selector.items())),
                one_per_node=job.one_per_node,
            )
        )
    p = model.priority
    policy = Policy(
        partitions=partitions,
        queues=queues,
        weights=PriorityWeights(
            age=p.weight_age,
            fairshare=p.weight_fairshare,
            jobsize=p.weight_jobsize,
            partition=p.weight_partition,
            qos=p.weight_qos,
            max_age=p.max_age,
        ),
    )
    return Scenario(
        name=model.name or name,
        nodes=tuple(nodes),
        jobs=tuple(sorted(jobs, key=lambda j: j.submit)),
        policy=policy,
        priority_classes=tuple(classes.values()),
        description=model.description,
        seed=model.simulation.seed,
        ttl_after_finished=model.simulation.ttl_after_finished,
    )
