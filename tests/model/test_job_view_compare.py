"""The store's per-event "did anything a job row reads change" test, against the tuple compare.

Why: ``Store._apply_pod`` skips the job's derivation when a pod event moved only the
resourceVersion. The test used to build two tuples of every other Pod field and compare them;
``store._same_job_view`` compares field by field, status first, and stops at the first
difference (issue 16, P3). It must answer exactly what the tuple comparison answered, for every
field, including a field equal but not identical and a NaN held by both pods.
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

from hpctop.model.objects import Pod
from hpctop.model.store import Store, _same_job_view
from tests.model_fixtures import event, pod

_NAMES = [f.name for f in dataclasses.fields(Pod) if f.name != "resource_version"]


def _tuple_view(p: Pod) -> tuple[object, ...]:
    return tuple(getattr(p, n) for n in _NAMES)


def _held() -> Pod:
    store = Store()
    obj = pod("p", node="n1", phase="Running", gpus=1, rv="1")
    store.apply_raw("Pod", event("ADDED", obj))
    return store.pods[("team-a", "p")]


def _other(value: object) -> Any:
    """A value unequal to ``value`` of a type the field can hold (or a fresh equal copy)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, dict):
        return {**value, "extra": "1"}
    if isinstance(value, tuple):
        return (*value, "x")
    return "changed" if value is None else None


def test_each_field_changed_alone_is_seen_and_the_resource_version_is_not() -> None:
    base = _held()
    assert _same_job_view(base, dataclasses.replace(base, resource_version="99"))
    for name in _NAMES:
        changed = dataclasses.replace(base, **{name: _other(getattr(base, name))})
        assert not _same_job_view(base, changed), name
        assert _same_job_view(base, changed) == (_tuple_view(base) == _tuple_view(changed)), name


def test_equal_copies_and_nan_answer_as_the_tuple_comparison() -> None:
    base = _held()
    copied = dataclasses.replace(base, labels=dict(base.labels), annotations=dict(base.annotations))
    assert _same_job_view(base, copied) and _tuple_view(base) == _tuple_view(copied)
    nan = dataclasses.replace(base, created=math.nan)
    assert _same_job_view(nan, nan) == (_tuple_view(nan) == _tuple_view(nan)) is True
    other_nan = dataclasses.replace(base, created=float("nan"))
    assert _same_job_view(nan, other_nan) == (_tuple_view(nan) == _tuple_view(other_nan)) is False


def test_random_field_sets_agree_with_the_tuple_comparison() -> None:
    rng = random.Random(16)
    base = _held()
    for _ in range(300):
        changes = {n: _other(getattr(base, n)) for n in rng.sample(_NAMES, rng.randint(0, 3))}
        changed = dataclasses.replace(base, **changes)
        assert _same_job_view(base, changed) == (_tuple_view(base) == _tuple_view(changed)), changes
