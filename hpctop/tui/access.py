"""What this identity may do on a live cluster: the rules reviews, the server's own 403s, the footer.

Keys are greyed out where the per-namespace SelfSubjectRulesReview says "probably denied" (a hint:
the server's answer to the request decides), and for :data:`DENIED_TTL` seconds after the server
itself refused an action with a 403. Reviews are asked off Textual's loop and cached per
(namespace, owner kind); the footer is refreshed only when the answer for the selection changes.
Also here: which Kueue queue a queue-pane row stands for (only a Kueue ClusterQueue or LocalQueue
is closed or opened from hpctop), and the "What may I do?" screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from hpctop.actions.requests import (
    YUNIKORN_QUEUE,
    ActionKind,
    Permission,
)
from hpctop.backends.slurm.act import SLURM_JOB_KIND
from hpctop.model.objects import JobKey
from hpctop.tui.base import ConsoleBase
from hpctop.tui.sanitize import sanitize_display
from hpctop.tui.screens.permissions import PermissionsScreen, permission_lines

#: owner kinds whose permissions are asked together (one rules review per namespace covers all);
#: a ClusterQueue's are kept under the session's default namespace (its rules review shows the
#: cluster-wide grants too), a LocalQueue's under its own namespace
PERMISSION_KINDS = ("Job", "Deployment", "Pod", "Workload", "ClusterQueue", "LocalQueue")
#: real seconds an action the server refused with a 403 stays greyed out, whatever the rules
#: review says: the server's answer outranks the review (a webhook or policy the review cannot see)
DENIED_TTL = 300.0
ACTION_VALUES = frozenset(k.value for k in ActionKind)


class Access(ConsoleBase):
    """Permissions of a live session, the queue a row stands for, the footer's greying."""

    def permission_for(self, kind: str, key: JobKey | None = None) -> Permission | None:
        """What the rules review said about ``kind`` on the selected job (None: unknown or not asked).

        A namespace not asked yet is asked now, in a worker; the footer follows when it answers.
        """
        if self.live is None or self.read_only or kind not in ACTION_VALUES:
            return None
        key = key if key is not None else self._current_key()
        if key is None:
            return None
        namespace, owner, _ = key
        if owner == SLURM_JOB_KIND:  # Slurm decides on its own jobs; no Kubernetes rules review says
            return None
        action = ActionKind(kind)
        if action in (ActionKind.PRIORITY, ActionKind.MOVE) and self._is_slinky(key):
            # A Slinky priority/partition change is a merge patch of the owner, the RBAC of its
            # hold (patch <kind>); a bare pod has no patch-based hold: unknown, the server decides.
            if owner == "Pod":
                return self.denied_permission(namespace, owner, action)
            held = self._permission(namespace, owner, ActionKind.HOLD)
            return self.denied_permission(namespace, owner, action) or held
        return self._permission(namespace, owner, action)

    def denied_permission(self, namespace: str, kind: str, action: ActionKind) -> Permission | None:
        """The server's own 403 for this action, while it still counts (``DENIED_TTL``)."""
        refused = self.denied.get((namespace, kind, action))
        if refused is None:
            return None
        at, why = refused
        if self.clock() - at < DENIED_TTL:
            return Permission(False, why)
        del self.denied[(namespace, kind, action)]
        return None

    def _permission(self, namespace: str, kind: str, action: ActionKind) -> Permission | None:
        """A 403 from the server first, else the cached rules review (asked now, in a worker, if absent)."""
        refused = self.denied_permission(namespace, kind, action)
        if refused is not None:
            return refused
        permissions = self.permission_cache.get((namespace, kind))
        if permissions is None:
            self.fetch_permissions(namespace, kinds=(kind,))
            return None
        return permissions.get(action)

    def queue_permission(self, mode: str, path: str | None = None) -> Permission | None:
        """What the rules review said about closing (``close``) or opening (``open``) a Kueue queue
        (the selected one by default); None: unknown, not asked yet, or not a Kueue queue."""
        if self.live is None or self.read_only:
            return None
        target = self.queue_target(path)
        if isinstance(target, str):
            return None
        kind, _, namespace = target
        action = ActionKind.RELEASE if mode == "open" else ActionKind.HOLD
        return self._permission(namespace or self.live.default_namespace, kind, action)

    def yunikorn_permission(self) -> Permission | None:
        """What the rules review of YuniKorn's namespace says about ``patch configmaps`` (``e``)."""
        if self.live is None or self.read_only:
            return None
        namespace = str(getattr(self.session.actuator, "yunikorn_namespace", "yunikorn"))
        return self._permission(namespace, YUNIKORN_QUEUE, ActionKind.PRIORITY)

    def queue_target(self, path: str | None = None) -> tuple[str, str, str] | str:
        """(kind, name, namespace) of the Kueue queue at ``path`` (the selected row by default), or
        why it cannot be closed or opened from here."""
        path = path if path is not None else self._selected_queue()
        if path is None:
            return "no queue selected"
        info = self.snapshot.queues.get(path)
        shown = sanitize_display(path, cap=200)
        if info is None:
            where = "the simulated cluster's" if self.simulated else "hpctop's own"
            return (
                f"{shown} is one of {where} queues, not a Kueue ClusterQueue or LocalQueue: only a "
                "Kueue queue is closed or opened from hpctop (its spec.stopPolicy)"
            )
        if info.backend != "kueue" or info.kind not in ("cluster", "local"):
            return (
                f"{shown} is a {info.backend} {info.kind} queue: only a Kueue ClusterQueue or LocalQueue "
                f"is closed or opened from hpctop (its spec.stopPolicy){_queue_how(info.backend, info.kind)}"
            )
        if info.kind == "cluster":
            return ("ClusterQueue", info.name, "")
        namespace = path.rsplit(".", 1)[-1].split("/", 1)[0]
        return ("LocalQueue", info.name, namespace)

    def fetch_permissions(
        self,
        namespace: str,
        then: Callable[[dict[tuple[str, str], Mapping[ActionKind, Permission]]], None] | None = None,
        kinds: Iterable[str] = (),
    ) -> None:
        """Ask the rules review of ``namespace`` for the usual owner kinds, ``kinds`` and the kinds
        of the jobs listed there (JobSet, Volcano, Kubeflow, ...), off Textual's loop; ``then`` gets
        the answer (after the cache and the footer took it). One review per namespace covers all."""
        live = self.live
        if live is None or self.read_only or namespace in self._permissions_pending:
            return
        self._permissions_pending.add(namespace)
        listed = {key[1] for key in self.snapshot.jobs if key[0] == namespace}
        wanted = list(dict.fromkeys([*PERMISSION_KINDS, *kinds, *sorted(listed)]))

        def ask() -> dict[tuple[str, str], Mapping[ActionKind, Permission]]:
            out: dict[tuple[str, str], Mapping[ActionKind, Permission]] = {}
            for kind in wanted:
                try:
                    out[(namespace, kind)] = live.permissions(namespace, kind)
                except Exception:  # unknown: offer the keys, the server decides (and says why)
                    out[(namespace, kind)] = {}
            return out

        def got(answer: dict[tuple[str, str], Mapping[ActionKind, Permission]]) -> None:
            self._permissions_pending.discard(namespace)
            self.permission_cache.update(answer)
            self._sync_bindings(force=True)
            if then is not None:
                then(answer)

        self.off_loop(ask, got, "permissions")

    def _sync_bindings(self, force: bool = False) -> None:
        """Refresh the footer when the selected job's permissions differ from what it shows.

        Only on a change: a footer refresh recomposes it, which every tick would make visible.
        """
        if self.live is None or self.read_only:
            return
        key = self._current_key()
        scope = (key[0], key[1]) if key is not None else None
        queue = self.queue_target()
        qscope = (queue[2] or self.live.default_namespace, queue[0]) if not isinstance(queue, str) else None
        state = (
            scope,
            id(self.permission_cache.get(scope)) if scope else None,
            qscope,
            id(self.permission_cache.get(qscope)) if qscope else None,
            len(self.denied),
        )
        if force or state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

    def action_what_may_i_do(self) -> None:
        """The "What may I do?" screen: identity and, per namespace and kind, each action's answer."""
        live = self.live
        if live is None:
            lines = permission_lines(
                "this console's simulated user",
                {("(simulated)", "any"): {}},
                "read-only mode: no action is offered" if self.read_only else "allowed (simulated cluster)",
            )
            self.push_screen(PermissionsScreen(lines))
            return
        key = self._current_key()
        namespaces = list(dict.fromkeys([live.default_namespace] + ([key[0]] if key else [])))
        read_only = self.read_only

        def ask() -> tuple[str, dict[tuple[str, str], Mapping[ActionKind, Permission]]]:
            who = live.identity()
            table: dict[tuple[str, str], Mapping[ActionKind, Permission]] = {}
            for namespace in namespaces:
                for kind in PERMISSION_KINDS:
                    try:
                        table[(namespace, kind)] = live.permissions(namespace, kind)
                    except Exception as exc:
                        table[(namespace, kind)] = {}
                        who += f" (permissions of {namespace} unknown: {type(exc).__name__})"
            return who, table

        def show(answer: tuple[str, dict[tuple[str, str], Mapping[ActionKind, Permission]]]) -> None:
            who, table = answer
            if not read_only:
                self.permission_cache.update(table)
                self._sync_bindings(force=True)
            fallback = "read-only mode: no action is offered" if read_only else "unknown (ask failed)"
            self.push_screen(PermissionsScreen(permission_lines(who, table, fallback)))

        self.off_loop(ask, show, "permissions")


def _queue_how(backend: str, kind: str) -> str:
    """How a queue hpctop does not close is closed, for the refusal."""
    if kind == "cohort":
        return "; a Kueue cohort has no stopPolicy: close its ClusterQueues"
    if backend == "volcano":
        return "; a Volcano queue closes with a CloseQueue bus Command, which hpctop does not send yet"
    if backend == "yunikorn":
        return (
            "; YuniKorn has no close/open switch (a queue removed from queues.yaml in the "
            "yunikorn-configs ConfigMap drains); e changes its priority offset and quota"
        )
    return ""
