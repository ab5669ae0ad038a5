"""Whether a snapshot changes anything the scheduling core reads, against the last one it scheduled.

Why: on a live cluster most watch events change a pod in ways the core never reads (a restart
count, a condition, a resourceVersion, an IP), yet every such event makes a new ``Pod`` object,
the store's version moves, and the live console re-ran the whole core for each refresh that
saw one (issue 16: CPU from 17 % idle to 72 % at 1k events/s, one event costing a warm cycle).
The core is a pure function of the nodes, of each pod's node, phase, requests and GPU indices,
of the jobs (all but their restart count and labels), of the priority classes and of the policy
(``core.py``), so when none of those changed the decisions at the same ``now`` are the same
(``test_scheduling_inputs.py`` checks this over random event sequences against a full recompute).
The console then treats the refresh like a quiet tick (only the result's ``now`` moves) until its
idle refresh re-runs the core for what the clock alone changes (ages, fair-share decay,
reservation ends).

The comparison costs C-level list work over the maps (keys compared by identity first, values
by ``is``) plus a field compare for the entries whose object changed: a few milliseconds at
50k pods, against a full cycle. Entries added, deleted or moved count as a change. This is
not an incremental decision path: an event that changes what the core reads still costs a
full (memoised) cycle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from itertools import compress
from operator import attrgetter, is_not
from typing import Any

from hpctop.model.objects import Job, Pod
from hpctop.model.store import Snapshot


def pod_inputs(pod: Pod) -> tuple[object, ...]:
    """What the core reads of a pod (``memo.PodsByNode``, ``placement.free_of``); its key is the map's."""
    return (pod.node_name, pod.phase, pod.requests, pod.gpu_indices)


def _same_map(old: Mapping[Any, Any], new: Mapping[Any, Any], same: Callable[[Any, Any], bool]) -> bool:
    """Same keys in the same order, and ``same(old, new)`` for every entry whose object changed."""
    if old is new:
        return True
    if len(old) != len(new) or list(old) != list(new):
        return False
    before, after = list(old.values()), list(new.values())
    changed = compress(range(len(after)), map(is_not, before, after))
    return all(same(before[i], after[i]) for i in changed)


def _same_pod(a: Pod, b: Pod) -> bool:
    return pod_inputs(a) == pod_inputs(b)


#: what the core never reads of a job (the rows read them from the snapshot, not the result);
#: ``backfilled`` is the binder's record of how the job started, for the rows
JOB_FIELDS_NOT_READ = frozenset({"restart_count", "labels", "backfilled"})
_JOB_FIELDS = tuple(f.name for f in dataclasses.fields(Job) if f.name not in JOB_FIELDS_NOT_READ)


#: one C call giving the tuple of what the core reads of a job (issue 16: the generator of
#: ``getattr`` compares it replaced was 8 % of K1's GIL samples)
_job_inputs = attrgetter(*_JOB_FIELDS)


def _same_job(a: Job, b: Job) -> bool:
    return bool(_job_inputs(a) == _job_inputs(b))


def _equal(a: object, b: object) -> bool:
    return a == b


def same_inputs(old: Snapshot, new: Snapshot) -> bool:
    """Whether the core, at the same ``now`` and policy, decides ``new`` exactly as ``old``."""
    return (
        dict(old.priority_classes) == dict(new.priority_classes)
        and _same_map(old.nodes, new.nodes, _equal)
        and _same_map(old.jobs, new.jobs, _same_job)
        and _same_map(old.pods, new.pods, _same_pod)
    )
