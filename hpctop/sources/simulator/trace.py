"""The demo cluster: the Alibaba openb GPU trace turned into a :class:`Scenario`.

Why a real trace: a console for GPU clusters should be shown on a GPU cluster's real shape and
real workload: GPU-sharing tasks asking for 0.22 of a T4, tasks pinned to a few GPU models, a few
8-GPU trainers among thousands of small jobs, and a fleet of 1,523 nodes of seven GPU models.
The data is the openb trace of Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
Workloads with Fragmentation Gradient Descent" (USENIX ATC 2023), from ``alibaba/clusterdata``
(``cluster-trace-gpu-v2023``); see ``data/README.md`` for the files and the credit.

Taken from the trace as is: every node of ``openb_node_list_all_node.csv`` (name, CPU, memory,
GPU count and model); every task of ``openb_pod_list_gpuspec33.csv`` (CPU, memory, GPU count,
GPU share ``gpu_milli``, allowed GPU models ``gpu_spec``, QoS, arrival, run time). A task whose
final phase in the trace is ``Failed`` fails in the simulation at the end of its run time; a task
that stayed ``Pending`` in the trace is submitted like any other (the trace records that it was
never placed then, not why; the core decides here).

Added, because the trace lacks it, all seeded (``seed``) and deterministic:

* **Time compression.** Trace time ``T`` maps to virtual ``t = max(0, T - T0) / COMPRESSION``
  with ``T0 = 10,000,000 s`` (day 115.7 of 149.3, where 99 % of the tasks arrive) and
  ``COMPRESSION = 720``: one trace hour is five virtual seconds and one trace day two virtual
  minutes, so the 2.9 million seconds of arrivals take 4,000 virtual seconds (67 minutes; about
  70 real seconds at the demo's default speed of 60). The ~80 tasks created before ``T0`` (the
  long-running ones) arrive at t = 0. Run times are *not* compressed (median 540 s) but are held
  between 30 s and ``MAX_DURATION = 4 h`` so the cluster keeps churning; the time limit of a job is
  its run time rounded up to the next of 10 min, 30 min, 1 h, 2 h, 4 h. With hpctop's core, at
  t = 3600 about 2,000 jobs run on ~1,500 GPUs and ~770 wait, nearly all on their team's quota;
  the last arrival is at t = 4030 and the last batch job ends near t = 18,500.
* **Tenants.** A task's team is a seeded hash of its name, weighted (``TEAMS``): three
  departments (``research``, ``product``, ``platform``) with two or three teams each, queue
  ``root.<dept>.<team>``, namespace ``<team>``, a user among the team's. Guaranteed GPU quotas
  sum to the cluster's GPUs, but not in proportion to the work: ``rl``, ``recsys`` and ``eval``
  hold large reservations they do not fill, while ``nlp``, ``vision``, ``search`` and ``infra``
  have small quotas with a ``max`` and queue on it. The trace alone keeps about a third of the
  6,212 GPUs busy, so the pending jobs of the demo are mostly the situation hpctop exists to
  explain: "my job waits although GPUs are idle" (QuotaExceeded), besides held jobs and jobs
  whose GPU models are scarce.
* **Gangs.** The trace has no multi-pod jobs, and no two multi-GPU tasks arrive in the same
  minute. Multi-GPU tasks of one shape (GPU count, CPU, memory, GPU models, QoS) created within
  ``GANG_WINDOW`` (one trace day) of the first become one gang job of that many members (at most
  8), submitted at the first one's arrival, running for the longest member's time.
* **Inference services.** Latency-sensitive tasks that lived longer than three trace days are
  model servers in all but name: those of one shape become one Deployment with that many
  replicas (groups of two or more; at most 8 replicas), running until cancelled.
* **Priority classes** from QoS: LS ``latency-sensitive`` 1000, Guaranteed ``guaranteed`` 900,
  Burstable ``burstable`` 500, BE ``best-effort`` 100.
* **Held jobs.** About 0.5 % of the batch jobs are submitted suspended (``HELD``).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from hpctop.model.policy import Policy, QueueSpec
from hpctop.model.resources import Resources
from hpctop.sources.scenario import (
    DEFAULT_GPU_MEMORY_MIB,
    GPU_MEMORY_MIB,
    JobSpec,
    NodeSpec,
    PriorityClassSpec,
    Scenario,
)

NODE_FILE = "openb_node_list_all_node.csv.gz"
POD_FILE = "openb_pod_list_gpuspec33.csv.gz"

T0 = 10_000_000
COMPRESSION = 720
MIN_DURATION = 30
MAX_DURATION = 4 * 3600
#: run times are multiplied by this; 1 keeps the trace's own (2 or 3 make the cluster busier, and slower)
LOAD = 1
TIME_LIMITS = (600, 1800, 3600, 7200, 14400)
GANG_WINDOW = 86_400
MAX_GANG = 8
SERVICE_MIN_LIFETIME = 3 * 86_400
MAX_REPLICAS = 8
HELD_FRACTION = 0.005
MIB = 1024 * 1024

PRIORITY_CLASSES = (
    PriorityClassSpec("latency-sensitive", 1000),
    PriorityClassSpec("guaranteed", 900),
    PriorityClassSpec("burstable", 500),
    PriorityClassSpec("best-effort", 100),
)
QOS_CLASS = {
    "LS": "latency-sensitive",
    "Guaranteed": "guaranteed",
    "Burstable": "burstable",
    "BE": "best-effort",
}


@dataclass(frozen=True, slots=True)
class Team:
    dept: str
    name: str
    weight: float  # share of the tasks
    guaranteed: float  # share of the cluster's GPUs
    max: float | None  # share of the cluster's GPUs
    users: tuple[str, ...]

    @property
    def queue(self) -> str:
        return f"root.{self.dept}.{self.name}"


TEAMS = (
    Team("research", "nlp", 0.30, 0.04, 0.06, ("alice", "bob", "chen")),
    Team("research", "vision", 0.12, 0.02, 0.03, ("dana", "eli")),
    Team("research", "rl", 0.08, 0.20, None, ("farah", "goran")),
    Team("product", "search", 0.15, 0.03, 0.04, ("hiro", "ines")),
    Team("product", "recsys", 0.15, 0.30, None, ("jon", "kim", "lena")),
    Team("platform", "infra", 0.10, 0.01, 0.02, ("mo", "nia")),
    Team("platform", "eval", 0.10, 0.40, None, ("omar", "pia")),
)

SERVICE_NAMES = (
    "chat-llm",
    "embedder",
    "reranker",
    "asr",
    "ocr",
    "image-tagger",
    "tts",
    "query-rewriter",
    "ranker",
    "translator",
    "moderation",
    "summarizer",
)


@dataclass(frozen=True, slots=True)
class TraceTask:
    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: tuple[str, ...]
    qos: str
    phase: str
    created: int
    deleted: int

    @property
    def lifetime(self) -> int:
        return self.deleted - self.created

    @property
    def shape(self) -> tuple[int, int, int, int, tuple[str, ...], str]:
        return (self.num_gpu, self.gpu_milli, self.cpu_milli, self.memory_mib, self.gpu_spec, self.qos)


def _rows(filename: str) -> Iterator[dict[str, str]]:
    data = resources.files("hpctop.sources.simulator").joinpath("data", filename).read_bytes()
    text = gzip.decompress(data).decode("utf-8")
    yield from csv.DictReader(io.StringIO(text))


@lru_cache(maxsize=1)
def trace_nodes() -> tuple[NodeSpec, ...]:
    """The 1,523 nodes of the trace."""
    out = []
    for row in _rows(NODE_FILE):
        gpus = int(row["gpu"])
        model = row["model"] or None
        out.append(
            NodeSpec(
                name=row["sn"],
                cpu=int(row["cpu_milli"]),
                memory=int(row["memory_mib"]) * MIB,
                gpus=gpus,
                gpu_model=model if gpus else None,
                gpu_memory_mib=GPU_MEMORY_MIB.get(model or "", DEFAULT_GPU_MEMORY_MIB) if gpus else None,
                max_pods=110,
            )
        )
    return tuple(out)


@lru_cache(maxsize=1)
def trace_tasks() -> tuple[TraceTask, ...]:
    """The 8,152 tasks of the trace, in file order."""
    out = []
    for row in _rows(POD_FILE):
        num_gpu = int(row["num_gpu"])
        out.append(
            TraceTask(
                name=row["name"],
                cpu_milli=int(row["cpu_milli"]),
                memory_mib=int(row["memory_mib"]),
                num_gpu=num_gpu,
                gpu_milli=int(row["gpu_milli"] or 0) if num_gpu else 0,
                gpu_spec=tuple(sorted({m for m in row["gpu_spec"].split("|") if m})),
                qos=row["qos"],
                phase=row["pod_phase"],
                created=int(row["creation_time"]),
                deleted=int(row["deletion_time"]),
            )
        )
    return tuple(out)


def _unit(seed: int, salt: str, name: str) -> float:
    """A seeded, platform-independent hash of ``name`` in [0, 1)."""
    digest = hashlib.blake2b(f"{seed}:{salt}:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _team_thresholds() -> tuple[float, ...]:
    total = sum(t.weight for t in TEAMS)
    acc, out = 0.0, []
    for team in TEAMS:
        acc += team.weight / total
        out.append(acc)
    return tuple(out)


_TEAM_THRESHOLDS = _team_thresholds()  # cumulative weights, summed in TEAMS order


def team_of(seed: int, name: str) -> Team:
    x = _unit(seed, "team", name)
    for team, acc in zip(TEAMS, _TEAM_THRESHOLDS, strict=True):
        if x < acc:
            return team
    return TEAMS[-1]


def virtual_time(trace_seconds: int) -> int:
    """Trace seconds → virtual seconds since t = 0 (see the module docstring)."""
    return max(0, trace_seconds - T0) // COMPRESSION


def run_time(lifetime: int) -> int:
    return min(max(lifetime * LOAD, MIN_DURATION), MAX_DURATION)


def time_limit(duration: int) -> int:
    return next((limit for limit in TIME_LIMITS if limit >= duration), duration)


def _group(tasks: list[TraceTask], window: int, cap: int) -> list[list[TraceTask]]:
    open_groups: dict[tuple[object, ...], list[TraceTask]] = {}
    groups: list[list[TraceTask]] = []
    for task in sorted(tasks, key=lambda t: (t.created, t.name)):
        group = open_groups.get(task.shape)
        if group is not None and task.created - group[0].created <= window and len(group) < cap:
            group.append(task)
        else:
            group = [task]
            open_groups[task.shape] = group
            groups.append(group)
    return groups


def _quotas(total_gpus: int) -> dict[str, int]:
    """Guaranteed whole GPUs per team, largest remainder first, so that they sum to ``total_gpus``."""
    exact = {t.queue: t.guaranteed * total_gpus for t in TEAMS}
    out = {q: int(v) for q, v in exact.items()}
    short = total_gpus - sum(out.values())
    for q in sorted(exact, key=lambda q: (out[q] - exact[q], q))[:short]:
        out[q] += 1
    return out


def _policy(nodes: tuple[NodeSpec, ...]) -> Policy:
    total_gpus = sum(n.gpus for n in nodes)
    guaranteed = _quotas(total_gpus)
    queues: list[QueueSpec] = [QueueSpec("root")]
    depts: dict[str, list[Team]] = {}
    for team in TEAMS:
        depts.setdefault(team.dept, []).append(team)
    for dept, teams in depts.items():
        dept_gpus = sum(guaranteed[t.queue] for t in teams)
        queues.append(QueueSpec(f"root.{dept}", guaranteed=Resources(gpu=1000 * dept_gpus)))
        for team in teams:
            cap = max(round(team.max * total_gpus), guaranteed[team.queue]) if team.max is not None else None
            queues.append(
                QueueSpec(
                    team.queue,
                    guaranteed=Resources(gpu=1000 * guaranteed[team.queue]),
                    max=Resources(gpu=1000 * cap) if cap is not None else None,
                )
            )
    return Policy(queues=tuple(queues))


def _job(
    seed: int,
    name: str,
    tasks: list[TraceTask],
    *,
    kind: str = "batch",
) -> JobSpec:
    first = tasks[0]
    team = team_of(seed, name)
    user = team.users[int(_unit(seed, "user", name) * len(team.users))]
    duration = run_time(max(t.lifetime for t in tasks) if len(tasks) > 1 else first.lifetime)
    gpu_count = first.num_gpu
    gpu_milli = first.gpu_milli if gpu_count == 1 else 1000
    held = kind == "batch" and _unit(seed, "held", name) < HELD_FRACTION
    return JobSpec(
        name=name,
        namespace=team.name,
        queue=team.queue,
        submit=float(virtual_time(first.created)),
        duration=float(duration) if kind == "batch" else None,
        members=len(tasks),
        min_members=len(tasks) if kind == "batch" else 1,
        cpu=first.cpu_milli,
        memory=first.memory_mib * MIB,
        gpu_count=gpu_count,
        gpu_milli=gpu_milli if gpu_count else 1000,
        kind=kind,
        gpu_models=first.gpu_spec,
        priority_class=QOS_CLASS.get(first.qos, "best-effort"),
        time_limit=time_limit(duration) if kind == "batch" else None,
        user=user,
        held=held,
        fail=kind == "batch" and any(t.phase == "Failed" for t in tasks),
        labels=(("hpctop.io/trace-task", first.name), ("hpctop.io/qos", first.qos)),
    )


#: Synthetic distributed-training gangs added to the trace. The trace keeps about a third of the
#: cluster's GPUs busy and has almost no multi-node jobs, so on its own nothing ever waits for
#: GPUs, and reservations, backfill and ETAs never show. These gangs (whole 8-GPU nodes of the
#: scarcer models, V100M32 and G3, for teams with large guarantees) contend for those pools the
#: way pre-training jobs do on a real cluster. Seeded: (count, GPU model) pairs and timings below.
TRAINING_GANGS = 18
TRAINING_MODELS = ("V100M32", "G3")
TRAINING_TEAMS = ("rl", "recsys", "eval")
TRAINING_NAMES = ("pretrain", "sft", "rlhf", "distill", "moe")


def _training_gangs(seed: int, arrival_span: float) -> list[JobSpec]:
    rng = random.Random(f"{seed}:training-gangs")
    teams = [t for t in TEAMS if t.name in TRAINING_TEAMS]
    jobs: list[JobSpec] = []
    for i in range(TRAINING_GANGS):
        team = teams[i % len(teams)]
        model = TRAINING_MODELS[i % len(TRAINING_MODELS)]
        members = rng.choice((2, 3, 4, 6, 8))
        duration = rng.choice((1800, 2700, 3600, 5400))
        jobs.append(
            JobSpec(
                name=f"{TRAINING_NAMES[i % len(TRAINING_NAMES)]}-{model.lower()}-{i:02d}",
                namespace=team.name,
                queue=team.queue,
                submit=float(round(rng.uniform(0, arrival_span * 0.8))),
                duration=float(duration),
                members=members,
                min_members=members,
                cpu=32_000,
                memory=128 * 1024 * MIB,
                gpu_count=8,
                gpu_milli=1000,
                gpu_models=(model,),
                priority_class=rng.choice(("latency-sensitive", "burstable", "best-effort")),
                time_limit=time_limit(duration),
                user=team.users[i % len(team.users)],
                labels=(("hpctop.io/synthetic", "training-gang"),),
            )
        )
    return jobs


@lru_cache(maxsize=4)
def openb_scenario(seed: int = 1) -> Scenario:
    """The demo scenario: all trace nodes and tasks, with tenants, gangs, services and holds added."""
    nodes = trace_nodes()
    tasks = list(trace_tasks())
    services = [t for t in tasks if t.qos == "LS" and t.lifetime > SERVICE_MIN_LIFETIME]
    service_groups = [g for g in _group(services, window=10**9, cap=MAX_REPLICAS) if len(g) >= 2]
    in_service = {t.name for g in service_groups for t in g}
    rest = [t for t in tasks if t.name not in in_service]
    multi = [t for t in rest if t.num_gpu > 1]
    gangs = _group(multi, window=GANG_WINDOW, cap=MAX_GANG)
    jobs: list[JobSpec] = []
    for i, group in enumerate(sorted(service_groups, key=lambda g: (g[0].created, g[0].name))):
        name = SERVICE_NAMES[i] if i < len(SERVICE_NAMES) else f"service-{i}"
        jobs.append(_job(seed, name, group, kind="service"))
    for group in gangs:
        jobs.append(_job(seed, group[0].name, group))
    for task in rest:
        if task.num_gpu <= 1:
            jobs.append(_job(seed, task.name, [task]))
    jobs.extend(_training_gangs(seed, max(j.submit for j in jobs)))
    jobs.sort(key=lambda j: (j.submit, j.name))
    return Scenario(
        name="openb",
        nodes=nodes,
        jobs=tuple(jobs),
        policy=_policy(nodes),
        priority_classes=PRIORITY_CLASSES,
        description=(
            "Alibaba openb GPU trace (Weng et al., USENIX ATC 2023): 1,523 nodes, 8,152 tasks, "
            f"arrivals compressed {COMPRESSION}x"
        ),
        seed=seed,
        notes={
            "tasks": len(tasks),
            "gangs": sum(1 for g in gangs if len(g) > 1),
            "training_gangs": TRAINING_GANGS,
            "services": len(service_groups),
            "compression": COMPRESSION,
            "t0": T0,
            "max_duration": MAX_DURATION,
            "arrival_span_s": max(j.submit for j in jobs),
            "cluster_gpus": sum(n.gpus for n in nodes),
        },
    )


def describe() -> str:
    """One paragraph on the mapping (for ``--help`` and the about screen)."""
    hours = math.ceil((12_901_761 - T0) / COMPRESSION / 60)
    return (
        f"openb trace: arrivals after trace second {T0:,} compressed {COMPRESSION}x "
        f"(one trace day = {86400 // COMPRESSION} virtual s; arrivals span ~{hours} virtual minutes); "
        f"run times kept, between {MIN_DURATION} s and {MAX_DURATION // 3600} h."
    )
