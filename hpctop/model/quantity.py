"""Kubernetes quantities (``500m``, ``80Gi``, ``1.5Ti``, ``2e3``) parsed exactly.

Kubernetes serialises every resource amount as a string with an optional suffix. hpctop keeps
canonical integers (SCHEDULERS.md §1.6): CPU in millicores, memory in bytes, everything else in
its own unit, and fractional GPUs in milli-GPU. Parsing goes through ``Fraction`` so that
``0.1`` CPU is exactly 100m and ``1.5Ti`` is exact; results round *up* like the API server does
when it converts to a smaller scale. Garbage raises :class:`QuantityError`, never a silent zero.

Amounts are also bounded (:data:`LIMITS`): a number that came from the cluster sizes lists and
fills vectors downstream, so a node advertising ``1E18`` GPUs or a request of ``-8`` is refused
here, per object, rather than ending every view in ``MemoryError`` or in negative free GPUs
(issue 12). The bounds are far beyond any real hardware, so no real object meets them:

- GPUs: at most 4,096 whole GPUs in one node or one pod (the largest nodes today hold 8-16; a
  GB200 NVL72 rack is 72 GPUs over 18 nodes);
- CPU: at most 10^15 millicores (a trillion cores);
- memory and any other amount: at most 2^60 (one EiB of bytes, or a count of that size);
- never negative, never NaN or infinite (``1e400`` as a JSON number is refused by the parser).

Amounts summed over many nodes (queue quotas, a gang's total) have only the last two bounds.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from hpctop.errors import QuantityError

_BINARY = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4, "Pi": 1024**5, "Ei": 1024**6}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<exp>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


@lru_cache(maxsize=4096)
def _parse_string(text: str) -> Fraction:
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (examples: 500m, 2, 80Gi, 1.5Ti, 2e3)")
    value = Fraction(match["num"])
    if match["exp"]:
        exponent = int(match["exp"][1:])
        if abs(exponent) > 30:
            raise QuantityError(f"{text!r}: exponent out of range")
        value *= Fraction(10) ** exponent
    else:
        suffix = match["suffix"] or ""
        value *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    return -value if match["sign"] == "-" else value


def parse_quantity(value: str | int | float) -> Fraction:
    """Return the exact value of a quantity given as a string or a plain number."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a finite quantity")
        return Fraction(value).limit_denominator(10**9)
    if isinstance(value, str):
        return _parse_string(value)
    raise QuantityError(f"{value!r} is not a quantity")


@lru_cache(maxsize=8192)
def _milli_of_string(text: str) -> int:
    return math.ceil(_parse_string(text) * 1000)


@lru_cache(maxsize=8192)
def _int_of_string(text: str) -> int:
    return math.ceil(_parse_string(text))


def to_milli(value: str | int | float) -> int:
    """Quantity in thousandths, rounded up (CPU millicores, milli-GPU)."""
    if type(value) is str:
        return _milli_of_string(value)  # a cluster repeats a handful of request strings
    return math.ceil(parse_quantity(value) * 1000)


def to_int(value: str | int | float) -> int:
    """Quantity as a whole number, rounded up (bytes of memory, device counts)."""
    if type(value) is str:
        return _int_of_string(value)
    return math.ceil(parse_quantity(value))


#: the largest whole-GPU count of one node or one pod (see the module docstring)
MAX_GPUS = 4096
MAX_CPU_MILLI = 10**15
MAX_AMOUNT = 2**60
#: what bounds each canonical amount of one node or pod, by the kind of resource, and how it reads
LIMITS = {
    "gpu": (MAX_GPUS * 1000, f"{MAX_GPUS} GPUs"),
    "cpu": (MAX_CPU_MILLI, "10^15 millicores"),
    "memory": (MAX_AMOUNT, "1 EiB"),
    "other": (MAX_AMOUNT, "2^60"),
}
#: the bounds of amounts summed over many nodes (a queue's quota, a gang's minimum resources)
AGGREGATE_LIMITS = dict.fromkeys(LIMITS, (MAX_AMOUNT, "2^60 in canonical units"))


def bounded(resource: str, amount: int, limit: tuple[int, str], raw: object = None) -> int:
    """``amount`` if it lies in ``[0, limit]``; otherwise a :class:`QuantityError` naming ``resource``."""
    if 0 <= amount <= limit[0]:
        return amount
    shown = repr(raw) if raw is not None else str(amount)
    if amount < 0:
        raise QuantityError(f"{resource}: {shown} is negative")
    raise QuantityError(f"{resource}: {shown} is beyond any real node (at most {limit[1]})")


def format_cpu(milli: int) -> str:
    """Millicores for display: ``32`` for whole CPUs, ``500m`` otherwise."""
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def format_bytes(count: int) -> str:
    """Bytes for display with the largest binary suffix that keeps one decimal: ``80Gi``, ``1.5Ti``."""
    for suffix, scale in (
        ("Ei", 1024**6),
        ("Pi", 1024**5),
        ("Ti", 1024**4),
        ("Gi", 1024**3),
        ("Mi", 1024**2),
    ):
        if count >= scale:
            amount = count / scale
            return f"{amount:.0f}{suffix}" if amount == int(amount) else f"{amount:.1f}{suffix}"
    if count >= 1024:
        return f"{count / 1024:.0f}Ki"
    return str(count)


def format_gpu(milli: int) -> str:
    """Milli-GPU for display: ``8`` for whole GPUs, ``0.25`` for a shared fraction."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli / 1000:.2f}".rstrip("0").rstrip(".")
