"""Bounded time series of what the cluster did, for the console's charts and the job detail pane.

The charts ask "how did allocation, queue depth and throughput move over the last minutes", but a
snapshot only knows *now*. The console therefore calls :meth:`History.record` once per tick with
the latest snapshot and core result, and this module keeps fixed-size ring buffers (``deque`` with
``maxlen``) so memory stays flat for a console left open for days. It lives in the model layer, free
of Textual, so the same series can feed a one-shot table, a test or a future web view.

Counting jobs started/finished per interval looks at each job's ``start_time``/``end_time`` against
the previous record's time, which is O(jobs) per record; the console records at its tick rate
(about two per second), which keeps that well under a frame even at 100k jobs.

:class:`ActionJournal` keeps, per job, what the user did to it in this session (cancel, hold, ...)
and how it went, for the job detail pane.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from hpctop.model.objects import Job, JobKey
from hpctop.model.resources import Resources


class _PartitionLike(Protocol):
    """The parts of ``scheduling.types.PartitionStatus`` read here (the model may not import it)."""

    @property
    def name(self) -> str: ...

    @property
    def allocated(self) -> Resources: ...

    @property
    def capacity(self) -> Resources: ...


class _QueueLike(Protocol):
    @property
    def children(self) -> tuple[str, ...]: ...

    @property
    def pending_jobs(self) -> int: ...


class _ResultLike(Protocol):
    @property
    def now(self) -> float: ...

    @property
    def partitions(self) -> Sequence[_PartitionLike]: ...

    @property
    def queues(self) -> Mapping[str, _QueueLike]: ...


class _SnapshotLike(Protocol):
    @property
    def version(self) -> int: ...

    @property
    def jobs(self) -> Mapping[JobKey, Job]: ...


@dataclass(frozen=True, slots=True)
class Sample:
    """One recorded moment."""

    t: float
    gpu_allocated: Mapping[str, float]  # partition -> GPUs in use
    gpu_capacity: Mapping[str, float]  # partition -> GPUs schedulable
    pending: Mapping[str, int]  # leaf queue -> pending jobs
    started: int  # jobs that started since the previous sample
    finished: int  # jobs that finished since the previous sample


@dataclass
class History:
    """Ring buffers of :class:`Sample` plus recent wait times (seconds from submit to start)."""

    capacity: int = 600
    wait_capacity: int = 5000
    samples: deque[Sample] = field(init=False)
    waits: deque[float] = field(init=False)
    _last_t: float | None = field(init=False, default=None)
    _last_version: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.samples = deque(maxlen=self.capacity)
        self.waits = deque(maxlen=self.wait_capacity)

    def record(self, snapshot: _SnapshotLike, result: _ResultLike) -> Sample | None:
        """Add a sample for ``result.now``; ``None`` when time did not move and nothing changed."""
        now = float(result.now)
        if self._last_t is not None and now <= self._last_t and snapshot.version == self._last_version:
            return None
        alloc: dict[str, float] = {}
        cap: dict[str, float] = {}
        for part in result.partitions:
            alloc[part.name] = part.allocated.gpu / 1000
            cap[part.name] = part.capacity.gpu / 1000
        pending: dict[str, int] = {}
        for path, queue in result.queues.items():
            if not queue.children:
                pending[path] = int(queue.pending_jobs)
        since = self._last_t
        started = finished = 0
        if since is not None:
            for job in snapshot.jobs.values():
                st = job.start_time
                if st is not None and since < st <= now:
                    started += 1
                    self.waits.append(max(st - job.submit_time, 0.0))
                et = job.end_time
                if et is not None and since < et <= now:
                    finished += 1
        sample = Sample(now, alloc, cap, pending, started, finished)
        self.samples.append(sample)
        self._last_t = now
        self._last_version = snapshot.version
        return sample

    def series(self, name: str) -> tuple[list[float], dict[str, list[float]]]:
        """Times and one list per key for ``gpu_allocated``, ``gpu_capacity`` or ``pending``.

        Keys absent from a sample read as 0, so every list is as long as the times.
        """
        times = [s.t for s in self.samples]
        keys: dict[str, None] = {}
        for s in self.samples:
            keys.update(dict.fromkeys(getattr(s, name)))
        out = {k: [float(getattr(s, name).get(k, 0)) for s in self.samples] for k in keys}
        return times, out

    def throughput(self) -> tuple[list[float], list[int], list[int]]:
        """Times, jobs started and jobs finished per recorded interval."""
        return (
            [s.t for s in self.samples],
            [s.started for s in self.samples],
            [s.finished for s in self.samples],
        )


@dataclass(frozen=True, slots=True)
class JournalEntry:
    at: float
    action: str
    ok: bool
    message: str


@dataclass
class ActionJournal:
    """What was done to each job from this console (bounded per job and in jobs kept)."""

    per_job: int = 50
    max_jobs: int = 10_000
    entries: dict[JobKey, deque[JournalEntry]] = field(default_factory=dict)

    def add(self, job: JobKey, entry: JournalEntry) -> None:
        ring = self.entries.get(job)
        if ring is None:
            if len(self.entries) >= self.max_jobs:
                self.entries.pop(next(iter(self.entries)))
            ring = self.entries[job] = deque(maxlen=self.per_job)
        ring.append(entry)

    def of(self, job: JobKey) -> list[JournalEntry]:
        return list(self.entries.get(job, ()))
