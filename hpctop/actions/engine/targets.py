"""Where an action's object lives, the requests an action is made of, and what a preview saw.

Why these shapes: every request hpctop sends carries what makes it safe (RELIABILITY.md §2), and
that is the same for every backend: a DELETE names its ``propagationPolicy`` and carries uid and
resourceVersion ``preconditions``; a merge patch carries ``metadata.resourceVersion``, which the
API server turns into a precondition; everything but a DELETE carries ``fieldManager=hpctop``.
So the plans build their requests with :func:`guarded_delete` and :func:`guarded_patch` and
cannot forget a precondition. :class:`Target` is where the object is served *on this cluster*
(the resource registry's version decides the path, never a table here).
"""

from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from hpctop.actions.engine.objects import dig, rv_of, uid_of
from hpctop.actions.requests import Outcome, Preview
from hpctop.errors import ActionRefused
from hpctop.model.objects import JobKey
from hpctop.sources.kube.registry import ResourceRegistry

FIELD_MANAGER = "hpctop"
MERGE_PATCH = "application/merge-patch+json"


class StaleTarget(ActionRefused):
    """The object changed since the user saw it (a 409 on a precondition): nothing was changed.

    ``changed`` lists what differs; ``preview`` is a fresh preview of the same action on the new
    state, to show and confirm again (M2).
    """

    title = "changed since you saw it"
    outcome = Outcome.CONFLICT

    def __init__(self, detail: str, *, changed: tuple[str, ...], preview: Preview | None) -> None:
        super().__init__(detail)
        self.changed = changed
        self.preview = preview


@dataclass(frozen=True, slots=True)
class Target:
    """Where an object lives on the API server (``namespaced`` False: a cluster-scoped one)."""

    kind: str
    group: str
    version: str
    plural: str
    namespace: str
    name: str
    namespaced: bool = True

    @classmethod
    def of(cls, key: JobKey, registry: ResourceRegistry) -> Target | None:
        """Where the object of ``key`` is served on this cluster; None when discovery does not list it."""
        namespace, kind, name = key
        spec = registry.spec(kind)
        if spec is None:
            return None
        scoped = spec.namespaced
        return cls(kind, spec.group, spec.version, spec.plural, namespace if scoped else "", name, scoped)

    @property
    def path(self) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced:
            return f"{base}/namespaces/{self.namespace}/{self.plural}/{self.name}"
        return f"{base}/{self.plural}/{self.name}"

    @property
    def resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def where(self) -> str:
        """``in <namespace>``, or ``(cluster-scoped)``: where a message says the request went."""
        return f"in {self.namespace}" if self.namespaced else "(cluster-scoped)"

    def at_version_of(self, obj: Mapping[str, Any]) -> Target:
        """This target at the version the object was read from (an MPIJob is v2beta1 or v1)."""
        group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
        if version and group == self.group and version != self.version:
            return dataclasses.replace(self, version=version)
        return self

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespaced else f"{self.kind} {self.name}"


@dataclass(frozen=True, slots=True)
class Step:
    """One request of an action, and the RBAC attributes it needs."""

    method: str
    path: str
    body: dict[str, Any] | None
    verb: str
    group: str
    resource: str
    subresource: str = ""
    content_type: str = "application/json"
    #: take metadata.resourceVersion from the previous step's answer (requeue's release)
    chain_rv: bool = False
    #: DELETE takes no fieldManager; everything else carries it
    field_manager: bool = True
    #: before sending, wait (bounded) until Kueue has evicted the Workload, and take the
    #: resourceVersion of that read (Kueue requeue: active false → Evicted → active true)
    wait_evicted: bool = False
    #: after a Volcano Command is accepted, the vcjob phases that show the controller acted on it
    verify_phase: tuple[str, ...] = ()

    def params(self, *, dry_run: bool) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.field_manager:
            out["fieldManager"] = FIELD_MANAGER
        if dry_run:
            out["dryRun"] = "All"
        return out

    def describe(self, *, dry_run: bool = False) -> str:
        query = urllib.parse.urlencode(self.params(dry_run=dry_run))
        body = orjson.dumps(self.body).decode() if self.body is not None else ""
        return f"{self.method} {self.path}" + (f"?{query}" if query else "") + (f" {body}" if body else "")

    @property
    def removes(self) -> bool:
        """Whether this request deletes its object (a DELETE, or an Eviction)."""
        return self.method == "DELETE" or self.subresource == "eviction"

    def with_rv(self, rv: str) -> Step:
        body = dict(self.body or {})
        meta = dict(body.get("metadata") or {})
        meta["resourceVersion"] = rv
        body["metadata"] = meta
        return dataclasses.replace(self, body=body, chain_rv=False, wait_evicted=False)

    def wanted(self) -> dict[str, Any]:
        """What a patch sets: its spec and data, and the labels/annotations a priority/move patch
        sets (the resourceVersion it carries is a precondition, not a value to find)."""
        body = self.body or {}
        meta = {k: v for k, v in (body.get("metadata") or {}).items() if k in ("labels", "annotations")}
        return {
            k: v for k, v in (("spec", body.get("spec")), ("data", body.get("data")), ("metadata", meta)) if v
        }


@dataclass(frozen=True, slots=True)
class Seen:
    """The object as a preview showed it: the preconditions an execute will carry."""

    obj: dict[str, Any]
    at: float

    @property
    def uid(self) -> str:
        return uid_of(self.obj)

    @property
    def rv(self) -> str:
        return rv_of(self.obj)


def guarded_delete(
    target: Target,
    preconditions: Mapping[str, str],
    propagation: str,
    *,
    group: str | None = None,
    resource: str | None = None,
    grace_period: int | None = None,
) -> Step:
    """A DELETE that names its propagation policy (batch Jobs otherwise orphan their pods) and
    carries ``preconditions`` (uid, and resourceVersion where the plan knows it)."""
    options: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": propagation,
    }
    if grace_period is not None:
        options["gracePeriodSeconds"] = grace_period
    options["preconditions"] = dict(preconditions)
    return Step(
        "DELETE",
        target.path,
        options,
        "delete",
        target.group if group is None else group,
        target.plural if resource is None else resource,
        field_manager=False,
    )


def pinned(obj: Mapping[str, Any]) -> dict[str, str]:
    """The uid and resourceVersion the user saw: a delete's full preconditions."""
    return {"uid": uid_of(obj), "resourceVersion": rv_of(obj)}


def guarded_patch(
    target: Target, obj: Mapping[str, Any], body: dict[str, Any], *, chain: bool = False, wait: bool = False
) -> Step:
    """A merge patch of ``target`` carrying the resourceVersion of ``obj`` as its precondition.

    ``metadata`` is merged, not replaced: a body with labels or annotations keeps its RV."""
    body = body | {"metadata": {"resourceVersion": rv_of(obj), **(body.get("metadata") or {})}}
    return Step(
        "PATCH", target.path, body, "patch", target.group, target.plural, content_type=MERGE_PATCH,
        chain_rv=chain, wait_evicted=wait,
    )  # fmt: skip


def owner_refs(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [r for r in dig(obj, "metadata", "ownerReferences") or [] if isinstance(r, dict)]


__all__ = [
    "FIELD_MANAGER",
    "MERGE_PATCH",
    "Seen",
    "StaleTarget",
    "Step",
    "Target",
    "guarded_delete",
    "guarded_patch",
    "owner_refs",
    "pinned",
]
