"""The action dialogs: preview → confirm → execute → notify → refresh, for jobs and queues.

Actions on a live cluster are HTTP round trips (a dry run, an access review, the request itself),
so a session that sets ``actions_in_thread`` gets its previews and executes run in a thread worker
and the answer handed back on Textual's loop (:meth:`ConsoleBase.off_loop`): a slow or stalled API
server never freezes the keyboard. The simulator's actuator is in memory and stays synchronous.
One action at a time: while one waits for the server (``action_busy``) a second is refused with a
message, and each dialog answers once (:class:`~hpctop.tui.screens.confirm.OnceModal`); every
dialog's answer runs through :meth:`ConsoleBase.guarded`, so a failure in a flow is a status-bar
line, not the end of the console. Jobs that changed since their preview (a 409 on a precondition)
are asked about again on the state the server has now.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.css.query import NoMatches

from hpctop.actions.requests import (
    ActionForbidden,
    ActionKind,
    ActionRequest,
    ActionResult,
    Outcome,
    Permission,
    Preview,
    QueueActuator,
    QueueChange,
    YuniKornActuator,
    is_queue_request,
    is_yunikorn_request,
    queue_request,
    summary,
    yunikorn_request,
)
from hpctop.backends.slurm.act import SLURM_JOB_KIND
from hpctop.errors import ActionRefused, HpctopError
from hpctop.model.history import JournalEntry
from hpctop.model.objects import JobKey
from hpctop.tui.keymap import MUTATING
from hpctop.tui.sanitize import sanitize_display
from hpctop.tui.screens.confirm import ConfirmScreen, PickScreen, PromptScreen, preview_text
from hpctop.tui.screens.detail import JobDetailScreen
from hpctop.tui.ticking import Ticking
from hpctop.tui.widgets.jobs import JobsTable

#: Volcano's job kind as hpctop keys it: its priority is a PriorityClass name, not a number
VOLCANO_JOB = "Job.batch.volcano.sh"


class ActionFlows(Ticking):
    """The dialogs of every action key (see the module doc)."""

    def _targets(self) -> list[tuple[JobKey, str, str]]:
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            job = self.snapshot.jobs.get(screen.key)
            return [(screen.key, job.uid if job else "", job.id if job else "/".join(screen.key))]
        return [(r.key, r.uid, r.id) for r in self._main(JobsTable, "#jobs").targets()]

    def action_job_action(self, kind: str) -> None:
        if self.read_only or kind not in MUTATING:
            return
        if self.action_busy:
            self.notify("Still waiting for the server's answer to the last action", markup=False, timeout=3)
            return
        targets = self._targets()
        if not targets:
            self.notify("No job selected", severity="warning", markup=False)
            return
        jobs = self._main(JobsTable, "#jobs")
        if self.screen is self.screen_stack[0] and not jobs.marked and not jobs.row_visible():
            self.notify(
                f"{kind}: the selected job is not on screen; show the jobs pane (3) and pick one",
                severity="warning",
                markup=False,
            )
            return
        action = ActionKind(kind)
        permission = self.permission_for(kind, targets[0][0])
        if permission is not None and permission.allowed is False:
            self.notify(
                sanitize_display(f"{kind}: {permission.reason}", cap=400), severity="warning", markup=False
            )
            return
        if action == ActionKind.PRIORITY:
            self._ask_priority(targets)
        elif action == ActionKind.MOVE:
            self._ask_queue(targets)
        else:
            self._confirm(action, targets, None)

    def action_queue_stop(self, mode: str) -> None:
        """``x`` (close: pick Hold or HoldAndDrain) and ``o`` (open) on the selected queue row."""
        if self.read_only or mode not in ("close", "open"):
            return
        if self.action_busy:
            self.notify("Still waiting for the server's answer to the last action", markup=False, timeout=3)
            return
        target = self.queue_target()
        if isinstance(target, str):
            self.notify(sanitize_display(target, cap=400), severity="warning", markup=False, timeout=6)
            return
        actuator = self.session.actuator
        if not isinstance(actuator, QueueActuator):
            self.notify(
                "This cluster's actuator cannot close or open queues", severity="warning", markup=False
            )
            return
        permission = self.queue_permission(mode)
        if permission is not None and permission.allowed is False:
            what = "close" if mode == "close" else "open"
            self.notify(
                sanitize_display(f"{what} queue: {permission.reason}", cap=400),
                severity="warning",
                markup=False,
            )
            return
        if mode == "open":
            self._confirm_queue(actuator, target, "None")
            return
        choices = {
            "Hold: admit nothing new; admitted workloads keep running": "Hold",
            "HoldAndDrain: admit nothing new and EVICT the admitted workloads": "HoldAndDrain",
        }

        def picked(choice: str | None) -> None:
            if choice is not None:
                self._confirm_queue(actuator, target, choices[choice])

        kind, name, namespace = target
        shown = f"{kind} {namespace + '/' if namespace else ''}{name}"
        self.push_screen(PickScreen(f"Close {shown}", list(choices)), self.guarded(picked))

    def action_queue_edit(self, path: str | None = None) -> None:
        """``e`` on a YuniKorn queue row: its priority offset and quota, typed as ``name=value``."""
        if self.read_only:
            return
        if self.action_busy:
            self.notify("Still waiting for the server's answer to the last action", markup=False, timeout=3)
            return
        path = path if path is not None else self._selected_queue()
        info = self.snapshot.queues.get(path) if path is not None else None
        if path is None or info is None or info.backend != "yunikorn":
            shown = sanitize_display(path or "no queue", cap=200)
            self.notify(
                f"{shown}: e changes a YuniKorn queue's priority offset and quota (its queues.yaml); "
                "this is not a YuniKorn queue (a Kueue queue's quota is its ClusterQueue's spec, which "
                "hpctop does not edit)",
                severity="warning",
                markup=False,
                timeout=6,
            )
            return
        actuator = self.session.actuator
        if not isinstance(actuator, YuniKornActuator):
            self.notify(
                "This cluster's actuator cannot change YuniKorn queues", severity="warning", markup=False
            )
            return
        permission = self.yunikorn_permission()
        if permission is not None and permission.allowed is False:
            self.notify(
                sanitize_display(f"edit queue: {permission.reason}", cap=400),
                severity="warning",
                markup=False,
            )
            return
        queue = info.path

        def typed(text: str | None) -> None:
            if not text:
                return
            try:
                change = QueueChange.parse(queue, text)
            except ValueError as exc:
                self.notify(sanitize_display(str(exc), cap=300), severity="error", markup=False)
                return
            self._confirm_yunikorn(actuator, change)

        self.push_screen(
            PromptScreen(
                f"YuniKorn queue {sanitize_display(queue, cap=120)}: priority.offset=N, "
                "guaranteed.<resource>=Q, max.<resource>=Q",
                "",
                "e.g. priority.offset=100 max.nvidia.com/gpu=16",
            ),
            self.guarded(typed),
        )

    def _confirm_yunikorn(self, actuator: YuniKornActuator, change: QueueChange) -> None:
        title = f"YuniKorn queue {change.queue}: {change.describe()}"
        self.action_busy = True
        if self.actions_in_thread:
            self.notify("Asking YuniKorn and the server what this would do…", markup=False, timeout=2)

        def work() -> Preview:
            try:
                return actuator.preview_yunikorn_queue(change)
            except HpctopError as exc:
                return Preview(yunikorn_request(change), False, (), refusal=exc.detail)
            except Exception as exc:  # a preview that cannot be had is a refusal, not a crash
                return Preview(
                    yunikorn_request(change),
                    False,
                    (),
                    refusal=f"preview failed: {type(exc).__name__}: {exc}",
                )

        def ask(preview: Preview) -> None:
            self.action_busy = False
            body = preview_text(title, [preview], [change.queue], noun="queue")
            self._ask(body, [preview.request], [preview])

        self.off_loop(work, ask, "preview")

    def _confirm_queue(self, actuator: QueueActuator, target: tuple[str, str, str], policy: str) -> None:
        """Preview (the server's dry run), then the same confirm → execute flow as the job actions."""
        kind, name, namespace = target
        shown = f"{kind} {namespace + '/' if namespace else ''}{name}"
        verb = "Open" if policy == "None" else "Close"
        title = f"{verb} {shown} (spec.stopPolicy {policy})"
        request = queue_request(kind, name, namespace, policy)
        self.action_busy = True
        if self.actions_in_thread:
            self.notify("Asking the server what this would do (dry run)…", markup=False, timeout=2)

        def work() -> Preview:
            try:
                return actuator.preview_queue_stop_policy(kind, name, namespace, policy)
            except HpctopError as exc:
                return Preview(request, False, (), refusal=exc.detail)
            except Exception as exc:  # a preview that cannot be had is a refusal, not a crash
                return Preview(request, False, (), refusal=f"preview failed: {type(exc).__name__}: {exc}")

        def ask(preview: Preview) -> None:
            self.action_busy = False
            self._ask(preview_text(title, [preview], [shown], noun="queue"), [preview.request], [preview])

        self.off_loop(work, ask, "preview")

    def _ask_priority(self, targets: list[tuple[JobKey, str, str]]) -> None:
        """The new priority, in the form the first target's backend takes it: a PriorityClass name
        for a Volcano job (picked from the cluster's), a number or a WorkloadPriorityClass name for a
        Kueue Workload, a number for the rest (a Slinky job's Slurm priority, the simulator's)."""
        action = ActionKind.PRIORITY
        key = targets[0][0]
        job = self.snapshot.jobs.get(key)
        if key[1] == VOLCANO_JOB:
            classes = sorted(self.snapshot.priority_classes.values(), key=lambda c: (-c.value, c.name))
            if classes:
                labels = {f"{c.name} ({c.value})": c.name for c in classes}

                def picked(choice: str | None) -> None:
                    if choice is not None:
                        self._confirm(action, targets, labels[choice])

                self.push_screen(
                    PickScreen("New PriorityClass (spec.priorityClassName)", list(labels)),
                    self.guarded(picked),
                )
                return

            def named(value: str | None) -> None:
                if value:
                    self._confirm(action, targets, value.strip())

            current = job.priority_class or "" if job is not None else ""
            self.push_screen(
                PromptScreen("New PriorityClass name", current, "e.g. high-priority"), self.guarded(named)
            )
            return
        if key[1] == "Workload":

            def number_or_name(value: str | None) -> None:
                value = (value or "").strip()
                if value:
                    number = value.lstrip("-").isdigit()
                    self._confirm(action, targets, int(value) if number else value)

            self.push_screen(
                PromptScreen(
                    "New priority: a number (spec.priority) or a WorkloadPriorityClass name",
                    "",
                    "e.g. 1000 or high",
                ),
                self.guarded(number_or_name),
            )
            return
        slinky = self._is_slinky(key)
        # a Slinky job's Slurm priority is not its pods' priority: no value to start from
        current = "" if slinky or job is None or job.priority_value is None else str(job.priority_value)

        def got_priority(value: str | None) -> None:
            if value:
                try:
                    self._confirm(action, targets, int(value))
                except ValueError:
                    self.notify("Priority must be a whole number", severity="error", markup=False)

        title = "New Slurm priority (slurmjob.slinky.slurm.net/priority)" if slinky else "New priority value"
        self.push_screen(PromptScreen(title, current, "e.g. 1000", integer=True), self.guarded(got_priority))

    def _ask_queue(self, targets: list[tuple[JobKey, str, str]]) -> None:
        """Where to move: a Slurm partition for a Slinky job, else a leaf of the queue tree."""
        action = ActionKind.MOVE
        key = targets[0][0]

        def got_queue(value: str | None) -> None:
            if value:
                self._confirm(action, targets, value.strip())

        if key[1] == SLURM_JOB_KIND:  # a Slurm job moves to another Slurm partition (scontrol update)
            job = self.snapshot.jobs.get(key)
            self.push_screen(
                PromptScreen("Move to Slurm partition", (job.partition or "") if job else "", "e.g. gpu"),
                self.guarded(got_queue),
            )
            return
        if self._is_slinky(key):
            job = self.snapshot.jobs.get(key)
            current = (job.slurm_partition or job.partition or "") if job is not None else ""
            self.push_screen(
                PromptScreen(
                    "Move to Slurm partition (slurmjob.slinky.slurm.net/partition)", current, "e.g. gpu"
                ),
                self.guarded(got_queue),
            )
            return
        leaves = [p for p, q in self.result.queues.items() if not q.children]
        self.push_screen(PickScreen("Move to queue", leaves), self.guarded(got_queue))

    def _previews(self, requests: list[ActionRequest]) -> list[Preview]:
        """The actuator's preview of each request (a dry run on a live cluster); never raises."""
        previews: list[Preview] = []
        for req in requests:
            try:
                previews.append(self.session.actuator.preview(req))
            except HpctopError as exc:
                previews.append(Preview(req, False, (), refusal=exc.detail))
            except Exception as exc:  # a preview that cannot be had is a refusal, not a crash
                previews.append(
                    Preview(req, False, (), refusal=f"preview failed: {type(exc).__name__}: {exc}")
                )
        return previews

    def _confirm(
        self, action: ActionKind, targets: list[tuple[JobKey, str, str]], value: str | int | None
    ) -> None:
        requests = [
            ActionRequest(action, key, uid, value, scheduler=self._scheduler_of(key))
            for key, uid, _ in targets
        ]
        names = [shown for _, _, shown in targets]
        title = f"{action.value.capitalize()} {len(targets)} job(s)"
        self.action_busy = True
        if self.actions_in_thread:
            self.notify("Asking the server what this would do (dry run)…", markup=False, timeout=2)

        def ask(previews: list[Preview]) -> None:
            self.action_busy = False
            self._ask(preview_text(title, previews, names, simulated=self.simulated), requests, previews)

        self.off_loop(lambda: self._previews(requests), ask, "preview")

    def _scheduler_of(self, key: JobKey) -> str:
        job = self.snapshot.jobs.get(key)
        return job.scheduler_name if job is not None else ""

    def _ask(self, body: Text, requests: list[ActionRequest], previews: list[Preview]) -> None:
        def decided(ok: bool | None) -> None:
            if ok:
                self._execute(requests, previews)

        self.push_screen(ConfirmScreen(body, any(p.allowed for p in previews)), self.guarded(decided))

    def _send(
        self, requests: list[ActionRequest], previews: list[Preview]
    ) -> list[tuple[ActionRequest, Any]]:
        """Execute the allowed requests; each outcome is an ActionResult or the HpctopError it raised.

        The simulator's session is not thread-safe, so its executes hold the tick lock; a live
        actuator does not touch the session, and holding the lock through HTTP would stall ticks.
        """
        outcomes: list[tuple[ActionRequest, Any]] = []
        lock = contextlib.nullcontext() if self.actions_in_thread else self._lock
        for req, preview in zip(requests, previews, strict=True):
            if not preview.allowed:
                continue
            try:
                with lock:
                    outcomes.append((req, self._execute_one(req)))
            except HpctopError as exc:
                outcomes.append((req, exc))
        return outcomes

    def _execute_one(self, req: ActionRequest) -> Any:
        actuator = self.session.actuator
        if is_yunikorn_request(req):
            if not isinstance(actuator, YuniKornActuator):
                raise ActionRefused("this cluster's actuator cannot change YuniKorn queues")
            return actuator.set_yunikorn_queue(QueueChange.parse(req.job[2], str(req.value)))
        if is_queue_request(req):
            if not isinstance(actuator, QueueActuator):
                raise ActionRefused("this cluster's actuator cannot close or open queues")
            namespace, kind, name = req.job
            return actuator.set_queue_stop_policy(kind, name, namespace, str(req.value))
        return actuator.execute(req)

    def _execute(self, requests: list[ActionRequest], previews: list[Preview]) -> None:
        self.action_busy = True
        self.off_loop(lambda: self._send(requests, previews), self._report, "execute")

    def _report(self, outcomes: list[tuple[ActionRequest, Any]]) -> None:
        """Journal and notify each outcome; jobs that changed since the preview are asked about again."""
        self.action_busy = False
        stale: list[tuple[ActionRequest, tuple[str, ...], Preview | None]] = []
        for req, outcome in outcomes:
            if isinstance(outcome, HpctopError):
                fresh = getattr(outcome, "preview", None)
                changed = getattr(outcome, "changed", None)
                if isinstance(changed, tuple):  # StaleTarget: a 409 on a precondition (M2)
                    stale.append((req, changed, fresh if isinstance(fresh, Preview) else None))
                if isinstance(outcome, ActionForbidden):
                    self._forbidden(outcome)
                self.journal.add(req.job, JournalEntry(self.session.now, req.kind.value, False, str(outcome)))
                self.notify(
                    sanitize_display(str(outcome), cap=400), severity="error", markup=False, timeout=8
                )
                continue
            ok = bool(outcome.ok)
            # the changes once: an actuator whose message already lists them is not repeated
            extra = [c for c in outcome.changes if c not in outcome.message]
            message = "; ".join([outcome.message, *extra])
            self.journal.add(req.job, JournalEntry(self.session.now, req.kind.value, ok, message))
        if outcomes:
            first = outcomes[0][0]
            action = (
                ("open queue" if first.value == "None" else "close queue")
                if is_queue_request(first)
                else "change queue"
                if is_yunikorn_request(first)
                else first.kind.value
            )
            results = [outcome for _, outcome in outcomes]
            oks = [r for r in results if isinstance(r, ActionResult) and r.ok]
            done = sum(r.outcome != Outcome.GONE for r in oks)
            failed = len(oks) < len(results)
            self.notify(
                summary(action, results) + (" (in the simulated cluster)" if self.simulated else ""),
                severity="error" if failed and not done else "information",
                markup=False,
            )
        with contextlib.suppress(NoMatches):
            self._main(JobsTable, "#jobs").marked.clear()
            self.refresh_session()
        again = [(req, changed, fresh) for req, changed, fresh in stale if fresh is not None]  # None: gone
        if again:
            self._ask_again(again)

    def _forbidden(self, exc: ActionForbidden) -> None:
        """The server refused the request itself (403), whatever the review said: grey the action
        out, ask the rules review of that namespace again, and say what it says now. Never retried."""
        live = self.live
        if live is None:
            return
        namespace = exc.namespace or live.default_namespace  # a ClusterQueue's are kept there
        what = f"{exc.action.value} on {exc.kind} in {exc.namespace or 'the cluster'}"
        why = f"refused by the API server (403) when last tried; {what} is greyed out, not retried"
        self.denied[(namespace, exc.kind, exc.action)] = (self.clock(), why)
        for scope in [k for k in self.permission_cache if k[0] == namespace]:
            del self.permission_cache[scope]  # the actuator dropped its rules of it too: ask again

        def reviewed(answer: dict[tuple[str, str], Mapping[ActionKind, Permission]]) -> None:
            said = answer.get((namespace, exc.kind), {}).get(exc.action)
            review = said.reason if said is not None else "no answer"
            self.notify(
                sanitize_display(
                    f"{exc.action.value} is now greyed out for {exc.kind} in {namespace}: the API server "
                    f"refused it (403). Rules review asked again: {review}",
                    cap=400,
                ),
                severity="warning",
                markup=False,
                timeout=10,
            )

        self._sync_bindings(force=True)
        self.fetch_permissions(namespace, then=reviewed)

    def _ask_again(self, stale: list[tuple[ActionRequest, tuple[str, ...], Preview]]) -> None:
        """The confirmation again, on the state the server has now: what changed, then the fresh preview."""
        body = Text()
        body.append(f"{len(stale)} job(s) changed since you saw them; nothing was done.\n", style="bold")
        for req, changed, _ in stale:
            body.append("  ")
            body.append(sanitize_display("/".join(req.job), cap=200), style="bold")
            body.append("\n")
            for line in changed:
                body.append("    ~ ")
                body.append(sanitize_display(line, cap=400))
                body.append("\n")
        body.append("\n")
        previews = [fresh for _, _, fresh in stale]
        names = ["/".join(p.request.job) for p in previews]
        kind = previews[0].request.kind.value.capitalize()
        if all(is_yunikorn_request(p.request) for p in previews):
            title = f"YuniKorn queue {previews[0].request.job[2]}: {previews[0].request.value}, as it is now"
            body.append_text(preview_text(title, previews, names, noun="queue"))
        elif all(is_queue_request(p.request) for p in previews):
            policy = str(previews[0].request.value)
            kind = f"{'Open' if policy == 'None' else 'Close'} (spec.stopPolicy {policy})"
            body.append_text(preview_text(f"{kind}, as it is now", previews, names, noun="queue"))
        else:
            body.append_text(
                preview_text(
                    f"{kind} {len(previews)} job(s), as they are now",
                    previews,
                    names,
                    simulated=self.simulated,
                )
            )
        self._ask(body, [p.request for p in previews], previews)
