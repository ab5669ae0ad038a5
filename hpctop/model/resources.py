"""Resource vectors in canonical integer units.

A ``Resources`` is what a pod asks for, what a node offers, or what a queue is guaranteed. The
three resources every part of hpctop reasons about have their own fields (``cpu`` in millicores,
``memory`` in bytes, ``gpu`` in milli-GPU so that a trace task asking for 0.22 of a GPU and a DGX
node with 8 GPUs use one unit); other extended resources, MIG profiles above all
(``nvidia.com/mig-3g.40gb``), are kept as a sorted tuple so the vector stays hashable and frozen.

A MIG slice requested by its profile (the device plugin's ``mixed`` strategy) stays its own
resource, counted against the node's per-profile allocatable as Kubernetes does, and
:func:`gpu_equivalent_milli` says what share of one physical GPU it is (a ``3g.40gb`` three of an
A100's seven compute slices): what tables and the GPU pane add to whole GPUs, never 0 and never 1.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, TypeVar

from hpctop.model.quantity import AGGREGATE_LIMITS, LIMITS, bounded, to_int, to_milli

_T = TypeVar("_T")

GPU_RESOURCE = "nvidia.com/gpu"
GPU_SHARED_RESOURCE = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"
#: a MIG profile: compute slices, then memory (``1g.10gb``, ``3g.40gb``, ``1g.10gb+me``, ``1g.5gb.me``)
MIG_PROFILE = re.compile(r"^(\d+)g\.(\d+)gb")
#: compute slices of a MIG-capable GPU: 7 on A100, H100, H200 and B200 (NVIDIA MIG user guide,
#: "Supported MIG Profiles"), 4 on the A30, whose profiles are these (compute, memory) pairs
MIG_SLICES = 7
A30_PROFILES = frozenset({(1, 6), (2, 12), (4, 24)})
#: resources that are bookkeeping, not capacity a scheduler shares out
IGNORED_RESOURCES = frozenset({"pods", "ephemeral-storage", "hugepages-1Gi", "hugepages-2Mi"})


def fast_frozen_init(cls: type[_T]) -> type[_T]:
    """Give a frozen ``slots`` dataclass an ``__init__`` that costs what an unfrozen one does.

    Why: a frozen dataclass's generated ``__init__`` stores each field with
    ``object.__setattr__(self, name, value)`` (its own ``__setattr__`` refuses), which measured
    ~5x slower than plain attribute stores: ~7 us for a 27-field :class:`~hpctop.model.objects.Pod`
    on the dev VM, a third of projecting a decoded pod (PERFORMANCE.md P1/P3), and the same again
    for every ``Job`` row and ``Resources`` sum. The replacement has the same signature and
    defaults; it switches the new object to a twin subclass whose ``__setattr__`` is
    ``object.__setattr__`` (same layout: it adds no slots), stores the fields with plain
    assignments, and switches it back. Instances stay exactly what they were (type, equality,
    hash, immutability); a subclass of ``cls`` keeps the original ``__init__``.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not all(f.init for f in fields) or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_frozen_init needs a slots dataclass whose fields all init")
    twin = type(
        f"_{cls.__name__}Builder",
        (cls,),
        {"__slots__": (), "__setattr__": object.__setattr__, "__delattr__": object.__delattr__},
    )
    factory = object()  # marks a parameter left to its default_factory
    scope: dict[str, Any] = {"_set": object.__setattr__, "_twin": twin, "_cls": cls, "_factory": factory}
    scope["_type"] = type  # a field may be called "type" (Condition)
    scope["_orig"] = cls.__init__
    params: list[str] = []
    lines: list[str] = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            scope[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_factory")
            lines.append(f"    if {f.name} is _factory: {f.name} = _f_{f.name}()")
        else:
            params.append(f.name)
    names = [f.name for f in fields]
    source = "\n".join(
        [
            f"def __init__(self, {', '.join(params)}):",
            "    if _type(self) is not _cls:",
            f"        return _orig(self, {', '.join(f'{n}={n}' for n in names)})",
            *lines,
            "    _set(self, '__class__', _twin)",
            *(f"    self.{n} = {n}" for n in names),
            "    _set(self, '__class__', _cls)",
        ]
    )
    exec(source, scope)  # generated from the dataclass's own field names
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    init.__signature__ = inspect.signature(cls.__init__)  # "<factory>" defaults shown as before
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning to a method
    return cls


def _merge(
    a: tuple[tuple[str, int], ...], b: tuple[tuple[str, int], ...], sign: int
) -> tuple[tuple[str, int], ...]:
    if not b:
        return a
    merged = dict(a)
    for key, value in b:
        merged[key] = merged.get(key, 0) + sign * value
    return tuple(sorted((k, v) for k, v in merged.items() if v != 0))


@fast_frozen_init
@dataclass(frozen=True, slots=True)
class Resources:
    """An immutable resource vector: cpu (millicores), memory (bytes), gpu (milli-GPU), extended counts."""

    cpu: int = 0
    memory: int = 0
    gpu: int = 0
    extended: tuple[tuple[str, int], ...] = ()

    @staticmethod
    def from_k8s(
        values: Mapping[str, str | int | float] | None,
        *,
        gpu_milli: int | None = None,
        aggregate: bool = False,
    ) -> Resources:
        """Build from a Kubernetes resource map (``{"cpu": "500m", "nvidia.com/gpu": "1"}``).

        ``gpu_milli`` overrides the GPU amount when a sharing scheme states it elsewhere (the trace's
        ``alibabacloud.com/gpu-milli`` annotation). Every amount is bounded (negative or beyond
        any real node: :class:`~hpctop.errors.QuantityError`, see :mod:`hpctop.model.quantity`);
        ``aggregate`` amounts (a queue's quota, a gang's total) are bounded by ``MAX_AMOUNT`` only.
        """
        limits = AGGREGATE_LIMITS if aggregate else LIMITS
        cpu = memory = gpu = 0
        extended: list[tuple[str, int]] = []
        for key, raw in (values or {}).items():
            if key == "cpu":
                cpu = bounded(key, to_milli(raw), limits["cpu"], raw)
            elif key == "memory":
                memory = bounded(key, to_int(raw), limits["memory"], raw)
            elif key == GPU_RESOURCE:
                gpu = bounded(key, to_int(raw) * 1000, limits["gpu"], raw)
            elif key in IGNORED_RESOURCES:
                continue
            else:
                amount = bounded(key, to_int(raw), limits["other"], raw)
                if amount:
                    extended.append((key, amount))
        if gpu_milli is not None:
            gpu = gpu_milli
        return Resources(cpu, memory, gpu, tuple(sorted(extended)))

    @staticmethod
    def of(cpu: int = 0, memory: int = 0, gpu: int = 0, **extended: int) -> Resources:
        """Convenience constructor for tests and scenarios (already canonical units)."""
        return Resources(cpu, memory, gpu, tuple(sorted(extended.items())))

    def __add__(self, other: Resources) -> Resources:
        return Resources(
            self.cpu + other.cpu,
            self.memory + other.memory,
            self.gpu + other.gpu,
            _merge(self.extended, other.extended, 1),
        )

    def __sub__(self, other: Resources) -> Resources:
        return Resources(
            self.cpu - other.cpu,
            self.memory - other.memory,
            self.gpu - other.gpu,
            _merge(self.extended, other.extended, -1),
        )

    def scale(self, factor: int) -> Resources:
        """This vector times a whole number (a gang member's request times the member count)."""
        return Resources(
            self.cpu * factor,
            self.memory * factor,
            self.gpu * factor,
            tuple((k, v * factor) for k, v in self.extended),
        )

    def fits_in(self, available: Resources) -> bool:
        """Whether every component of this request is at most the available amount."""
        if self.cpu > available.cpu or self.memory > available.memory or self.gpu > available.gpu:
            return False
        if self.extended:
            have = dict(available.extended)
            return all(v <= have.get(k, 0) for k, v in self.extended)
        return True

    def exceeds(self, limit: Resources) -> list[str]:
        """Names of the components of this vector above ``limit`` (for reasons and evidence)."""
        names = [
            name
            for name, mine, theirs in (
                ("gpu", self.gpu, limit.gpu),
                ("cpu", self.cpu, limit.cpu),
                ("memory", self.memory, limit.memory),
            )
            if mine > theirs
        ]
        have = dict(limit.extended)
        names.extend(k for k, v in self.extended if v > have.get(k, 0))
        return names

    def get(self, name: str) -> int:
        """A component by name: ``gpu``, ``cpu``, ``memory`` or an extended resource."""
        if name == "gpu":
            return self.gpu
        if name == "cpu":
            return self.cpu
        if name == "memory":
            return self.memory
        return dict(self.extended).get(name, 0)

    def names(self) -> list[str]:
        """Names of the components that are non-zero."""
        out = [n for n, v in (("gpu", self.gpu), ("cpu", self.cpu), ("memory", self.memory)) if v]
        out.extend(k for k, _ in self.extended)
        return out

    def dominant_share(self, total: Resources) -> tuple[float, str]:
        """The largest ratio of this vector to ``total`` over resources ``total`` has, and its name.

        This is the *dominant share* of Dominant Resource Fairness (Ghodsi et al., NSDI 2011).
        """
        best = 0.0
        best_name = ""
        for name, mine, theirs in (
            ("gpu", self.gpu, total.gpu),
            ("cpu", self.cpu, total.cpu),
            ("memory", self.memory, total.memory),
        ):
            if theirs > 0 and mine / theirs > best:
                best, best_name = mine / theirs, name
        if self.extended:
            totals = dict(total.extended)
            for key, mine in self.extended:
                theirs = totals.get(key, 0)
                if theirs > 0 and mine / theirs > best:
                    best, best_name = mine / theirs, key
        return best, best_name

    def is_zero(self) -> bool:
        return self.cpu == 0 and self.memory == 0 and self.gpu == 0 and not self.extended

    def clamp_min_zero(self) -> Resources:
        return Resources(
            max(self.cpu, 0),
            max(self.memory, 0),
            max(self.gpu, 0),
            tuple((k, v) for k, v in self.extended if v > 0),
        )

    def componentwise_min(self, other: Resources) -> Resources:
        theirs = dict(other.extended)
        return Resources(
            min(self.cpu, other.cpu),
            min(self.memory, other.memory),
            min(self.gpu, other.gpu),
            tuple((k, min(v, theirs.get(k, 0))) for k, v in self.extended if min(v, theirs.get(k, 0)) > 0),
        )


ZERO = Resources()


@lru_cache(maxsize=256)
def mig_profile_share(profile: str) -> Fraction:
    """The share of one GPU that a MIG device of ``profile`` is (``3g.40gb``: 3 of 7 compute slices).

    An unparsable profile counts as a whole GPU (what the device plugin advertises is still one
    device), never as nothing.
    """
    match = MIG_PROFILE.match(profile)
    if match is None:
        return Fraction(1)
    compute, memory = int(match.group(1)), int(match.group(2))
    slices = 4 if (compute, memory) in A30_PROFILES else MIG_SLICES
    return min(Fraction(max(compute, 1), slices), Fraction(1))


def mig_counts(r: Resources) -> dict[str, int]:
    """The MIG devices of a vector by profile (``{"3g.40gb": 1}``): ``nvidia.com/mig-*`` amounts."""
    return {k[len(MIG_PREFIX) :]: v for k, v in r.extended if k.startswith(MIG_PREFIX) and v > 0}


def gpu_equivalent_milli(r: Resources) -> int:
    """``nvidia.com/gpu`` units (and ``nvidia.com/gpu.shared`` ones, the device plugin's name for
    time-sliced or MPS replicas under ``renameByDefault``) plus MIG devices as the share of one GPU
    each is, in milli-GPU.

    Summed exactly, then rounded: an A100 cut ``1g.10gb`` x2, ``2g.20gb``, ``3g.40gb`` is 1000.
    """
    if not r.extended:
        return r.gpu
    shared = r.get(GPU_SHARED_RESOURCE) * 1000
    slices = mig_counts(r)
    if not slices:
        return r.gpu + shared
    sliced = sum((n * mig_profile_share(p) for p, n in slices.items()), Fraction(0))
    return r.gpu + shared + round(sliced * 1000)


def total(vectors: Iterable[Resources]) -> Resources:
    """Sum of resource vectors."""
    acc = ZERO
    for vector in vectors:
        acc = acc + vector
    return acc
