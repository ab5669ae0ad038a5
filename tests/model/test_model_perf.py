"""The model's speed-ups keep the objects what they were (PERFORMANCE.md P1-P3).

``fast_frozen_init`` replaces the ``__init__`` of the frozen dataclasses built per event; these
tests pin that instances keep their type, equality, hash, defaults and immutability.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from hpctop.model.objects import Condition, Job, OwnerRef, Pod
from hpctop.model.resources import Resources, fast_frozen_init
from hpctop.model.states import JobState


@dataclasses.dataclass(frozen=True, slots=True)
class _Reference:
    type: str  # a field that shadows a builtin the generated code could use
    count: int = 1
    tags: dict[str, str] = dataclasses.field(default_factory=dict)


@fast_frozen_init
@dataclasses.dataclass(frozen=True, slots=True)
class _Fast:
    type: str
    count: int = 1
    tags: dict[str, str] = dataclasses.field(default_factory=dict)


def test_same_values_defaults_and_factories() -> None:
    a, b = _Fast("x"), _Fast("x")
    assert (a.type, a.count, a.tags) == ("x", 1, {})
    assert a.tags is not b.tags  # a fresh default per instance, as dataclasses make it
    assert a == b
    assert hash(Resources(1, 2, 3)) == hash(Resources(cpu=1, memory=2, gpu=3, extended=()))
    assert type(a) is _Fast
    assert _Fast(type="y", count=3, tags={"k": "v"}) == _Fast("y", 3, {"k": "v"})
    assert repr(_Fast("x")) == "_Fast(type='x', count=1, tags={})"
    assert str(inspect.signature(_Fast)).replace("'", "") == str(inspect.signature(_Reference)).replace(
        "'", ""
    )


def test_still_frozen_and_replaceable_and_picklable() -> None:
    a = _Fast("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.count = 2  # type: ignore[misc]
    assert dataclasses.replace(a, count=2) == _Fast("x", 2)
    r = Resources(1000, 2, 3000, (("x", 1),))
    assert pickle.loads(pickle.dumps(r)) == r
    with pytest.raises(TypeError):
        Resources(1, 2, 3, (), 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Condition("PodScheduled")  # type: ignore[call-arg]


def test_subclasses_keep_the_generated_dataclass_init() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Sub(_Fast):
        extra: int = 0

    s = Sub("x", extra=3)
    assert type(s) is Sub and s.extra == 3 and s.type == "x"


def test_refuses_classes_it_cannot_speed_up() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    with pytest.raises(TypeError):
        fast_frozen_init(NoSlots)


def test_model_objects_compare_as_before() -> None:
    owner = OwnerRef("batch/v1", "Job", "j", "u")
    assert owner == OwnerRef(api_version="batch/v1", kind="Job", name="j", uid="u")
    job_fields = {f.name for f in dataclasses.fields(Job)}
    assert "labels" in job_fields and Pod.__init__.__qualname__ == "Pod.__init__"
    assert JobState.RUNNING.is_active
