"""Who we are and what we may do: the SelfSubject reviews (RELIABILITY.md §2.3).

Why three reviews: a SelfSubjectRulesReview per namespace, cached briefly, says which actions to
offer (a hint: "absent" means "probably denied", and the server may say its answer is incomplete);
a SelfSubjectAccessReview for the exact verb, resource and object is asked right before sending;
a SelfSubjectReview names the user for the audit log. The server's 403 to the request itself
still wins (:mod:`hpctop.actions.engine.rules` drops the cached rules then). What each action
needs comes from the backends' plans (:meth:`~hpctop.actions.engine.plan.PlanBook.needs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hpctop.actions.engine.objects import dig
from hpctop.actions.engine.plan import PlanBook
from hpctop.actions.requests import ActionKind, Permission
from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken
from hpctop.sources.kube.transport import KubeClient

SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSRR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
SSR_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


@dataclass
class _Rules:
    rules: list[dict[str, Any]]
    incomplete: bool
    at: float


def review(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    group = "authentication.k8s.io" if kind == "SelfSubjectReview" else "authorization.k8s.io"
    return {"apiVersion": f"{group}/v1", "kind": kind, "spec": spec}


def rule_grants(rule: Mapping[str, Any], verb: str, group: str, resource: str, sub: str) -> bool:
    """Whether one resource rule of a rules review grants ``verb`` on ``resource[/sub]`` in ``group``."""
    verbs = rule.get("verbs") or []
    groups = rule.get("apiGroups") or []
    resources = rule.get("resources") or []
    if "*" not in verbs and verb not in verbs:
        return False
    if "*" not in groups and group not in groups:
        return False
    full = f"{resource}/{sub}" if sub else resource
    return any(r in ("*", full) or (sub and r in (f"{resource}/*", f"*/{sub}")) for r in resources)


class Reviews:
    """The reviews of one client, with the rules reviews cached ``rules_ttl`` seconds."""

    def __init__(self, client: KubeClient, *, rules_ttl: float, clock: Callable[[], float]) -> None:
        self.client = client
        self.rules_ttl = rules_ttl
        self._clock = clock
        self._rules: dict[str, _Rules] = {}
        self._user: str | None = None

    def forget(self) -> None:
        """Drop the cached rules and identity (on a context switch)."""
        self._rules.clear()
        self._user = None

    def drop(self, namespace: str) -> None:
        """Drop the cached rules of ``namespace`` (all of them for a cluster-scoped object: its grant
        shows in every namespace's rules review), after the server refused a request (403)."""
        if namespace:
            self._rules.pop(namespace, None)
        else:
            self._rules.clear()

    async def whoami(self) -> str:
        """The user name the server knows us by (SelfSubjectReview), else the context's name."""
        if self._user is None:
            name = ""
            try:
                response = await self.client.request("POST", SSR_PATH, body=review("SelfSubjectReview", {}))
                if response.ok:
                    name = str(dig(response.json(), "status", "userInfo", "username") or "")
            except (ServerUnreachable, StreamBroken):
                pass
            self._user = name or f"context:{self.client.connection.context or ''}"
        return self._user

    async def access_review(
        self, verb: str, group: str, resource: str, namespace: str, name: str = "", subresource: str = ""
    ) -> tuple[bool, str]:
        """A SelfSubjectAccessReview for exactly this request: (allowed, the server's reason)."""
        attrs = {
            "verb": verb,
            "group": group,
            "resource": resource,
            "subresource": subresource,
            "namespace": namespace,
            "name": name,
        }
        response = await self.client.request(
            "POST", SSAR_PATH, body=review("SelfSubjectAccessReview", {"resourceAttributes": attrs})
        )
        error = response.error()
        if error is not None:
            return False, f"the access review failed: {error.detail}"
        status = dig(response.json(), "status") or {}
        allowed = bool(status.get("allowed"))
        reason = str(status.get("reason") or status.get("evaluationError") or "")
        return allowed, reason

    async def rules(self, namespace: str) -> tuple[list[dict[str, Any]], bool]:
        """The SelfSubjectRulesReview of a namespace (cached ``rules_ttl`` seconds): rules, incomplete."""
        cached = self._rules.get(namespace)
        now = self._clock()
        if cached is not None and now - cached.at < self.rules_ttl:
            return cached.rules, cached.incomplete
        response = await self.client.request(
            "POST", SSRR_PATH, body=review("SelfSubjectRulesReview", {"namespace": namespace})
        )
        error = response.error()
        if error is not None:
            return [], True
        status = dig(response.json(), "status") or {}
        rules = [r for r in status.get("resourceRules") or [] if isinstance(r, dict)]
        entry = _Rules(rules, bool(status.get("incomplete")), now)
        self._rules[namespace] = entry
        return entry.rules, entry.incomplete

    async def permissions(self, book: PlanBook, namespace: str, kind: str) -> dict[ActionKind, Permission]:
        """Which actions to offer on an object of ``kind`` in ``namespace``, with reasons."""
        out: dict[ActionKind, Permission] = {}
        if self.client.read_only:
            return {k: Permission(False, "read-only mode") for k in ActionKind}
        rules, incomplete = await self.rules(namespace)
        for action in ActionKind:
            needs = book.needs(action, kind)
            if isinstance(needs, str):
                out[action] = Permission(False, needs)
                continue
            missing = [n for n in needs if not any(rule_grants(r, *n) for r in rules)]
            if not missing:
                out[action] = Permission(True, "allowed by the rules review")
                continue
            verb, group, resource, sub = missing[0]
            what = f"{verb} {resource}{'/' + sub if sub else ''}{'.' + group if group else ''}"
            if incomplete:
                out[action] = Permission(None, f"unknown: the rules review is incomplete ({what})")
            else:
                out[action] = Permission(False, f"probably denied: no rule grants {what} in {namespace}")
        return out


__all__ = ["SSAR_PATH", "SSRR_PATH", "SSR_PATH", "Reviews", "review", "rule_grants"]
