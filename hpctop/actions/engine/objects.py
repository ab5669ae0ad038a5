"""Reading Kubernetes objects as the actions need them: one field, a summary, what changed.

Why here: a preview, a 409 ("what changed since you saw it"), a result ("spec.suspend = true")
and a settle after a lost answer ("does the object hold what the patch sets?") all read objects
the same way, whatever the backend. The fields a summary shows are the ones the plans act on
(:class:`FieldSet`, filled from the backends' plans), plus the status a person decides by.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from hpctop.sources.kube.transport import ApiResponse

Path = tuple[str, ...]
#: an object as the API server returned it
Obj = dict[str, Any]
#: lines a person reads (what changed, what happens next)
Notes = tuple[str, ...]


def dig(obj: Any, *path: str) -> Any:
    """``obj[path[0]][path[1]]...``, or None where a level is missing or not a mapping."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def nest(path: Sequence[str], value: Any) -> dict[str, Any]:
    """``("spec", "runPolicy", "suspend"), True`` → ``{"spec": {"runPolicy": {"suspend": True}}}``."""
    out: Any = value
    for key in reversed(path):
        out = {key: out}
    assert isinstance(out, dict)
    return out


def contains(obj: Any, wanted: Any) -> bool:
    """Whether ``obj`` holds every value of the merge patch ``wanted`` (re-reading after a lost answer)."""
    if isinstance(wanted, dict):
        return isinstance(obj, dict) and all(contains(obj.get(k), v) for k, v in wanted.items())
    return bool(obj == wanted)


def uid_of(obj: Mapping[str, Any]) -> str:
    return str(dig(obj, "metadata", "uid") or "")


def rv_of(obj: Mapping[str, Any]) -> str:
    return str(dig(obj, "metadata", "resourceVersion") or "")


def true_conditions(obj: Mapping[str, Any]) -> list[str]:
    """The types of the object's conditions that are True, in order."""
    return [
        str(c.get("type"))
        for c in dig(obj, "status", "conditions") or []
        if isinstance(c, dict) and c.get("status") == "True"
    ]


def finished(obj: Mapping[str, Any]) -> str | None:
    """The terminal condition, as each kind spells it (Job ``Complete``, JobSet ``Completed``,
    Kubeflow ``Succeeded``; all ``Failed``)."""
    return next(
        (t for t in true_conditions(obj) if t in ("Complete", "Completed", "Succeeded", "Failed")), None
    )


def has_controller(obj: Mapping[str, Any]) -> bool:
    return any(
        isinstance(ref, dict) and ref.get("controller")
        for ref in dig(obj, "metadata", "ownerReferences") or []
    )


def status_message(response: ApiResponse) -> str:
    """The server's message in a non-2xx answer (a ``Status`` object's, else the body's start)."""
    body = response.json()
    if isinstance(body, dict) and body.get("kind") == "Status":
        return str(body.get("message") or body.get("reason") or "")[:512]
    return response.body[:256].decode("utf-8", "replace")


def is_pdb(response: ApiResponse) -> bool:
    """Whether an Eviction's 429 is a PodDisruptionBudget saying no (final, never bypassed)."""
    body = response.json()
    causes = dig(body, "details", "causes") or []
    if any(isinstance(c, dict) and c.get("reason") == "DisruptionBudget" for c in causes):
        return True
    return "disruption budget" in status_message(response).lower()


#: the status a person decides by, whatever the kind
_STATUS_FIELDS: tuple[Path, ...] = (
    ("status", "state", "phase"),
    ("spec", "nodeName"),
    ("status", "phase"),
    ("status", "active"),
    ("status", "ready"),
    ("status", "succeeded"),
    ("status", "failed"),
    ("status", "replicas"),
)


@dataclass(frozen=True, slots=True)
class FieldSet:
    """The fields the plans act on: what a summary shows and what a result reports.

    ``acted`` are the paths a plan's requests set (``spec.suspend``, a label, an annotation), in
    the order a result looks for them; ``annotations`` are hpctop's own bookkeeping annotations,
    shown by name (``annotation hpctop.io/held-replicas``).
    """

    acted: tuple[Path, ...]
    annotations: tuple[str, ...] = ()

    def summarize(self, obj: Mapping[str, Any]) -> dict[str, str]:
        """The fields a person cares about when deciding again, flattened to ``a.b → value``."""
        out: dict[str, str] = {}
        for path in (("metadata", "uid"), ("metadata", "deletionTimestamp"), *self.acted, *_STATUS_FIELDS):
            value = dig(obj, *path)
            if value is not None:
                out[".".join(path)] = orjson.dumps(value).decode()
        for name in self.annotations:
            held = dig(obj, "metadata", "annotations", name)
            if held is not None:
                out[f"annotation {name}"] = str(held)
        for condition in true_conditions(obj):
            out[f"condition {condition}"] = "True"
        return out

    def diff(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
        """What changed between two versions of an object, one line per field."""
        a, b = self.summarize(before), self.summarize(after)
        changed = tuple(
            f"{k}: {a.get(k, '(unset)')} → {b.get(k, '(unset)')}"
            for k in sorted(a.keys() | b.keys())
            if a.get(k) != b.get(k)
        )
        rv_a, rv_b = dig(before, "metadata", "resourceVersion"), dig(after, "metadata", "resourceVersion")
        if not changed and rv_a != rv_b:
            return (f"resourceVersion {rv_a} → {rv_b} (fields hpctop does not show changed)",)
        return changed

    def set_by(self, body: Mapping[str, Any] | None, answer: Any) -> str | None:
        """``a.b = value`` for the first acted field the request's body sets and the answer holds."""
        for path in self.acted:
            value = dig(answer, *path)
            if value is not None and body is not None and dig(body, *path) is not None:
                return f"{'.'.join(path)} = {orjson.dumps(value).decode()}"
        return None


__all__ = [
    "FieldSet",
    "Notes",
    "Obj",
    "Path",
    "contains",
    "dig",
    "finished",
    "has_controller",
    "is_pdb",
    "nest",
    "rv_of",
    "status_message",
    "true_conditions",
    "uid_of",
]
