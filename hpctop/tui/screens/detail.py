"""The job detail screen: everything hpctop knows about one job, like ``scontrol show job`` + ``sprio``.

The text is rebuilt from the latest snapshot each tick while the screen is open (the callback is
the app's), so the reason, ETA and placement stay live. Every cluster string goes through the
sanitiser with newlines kept only where a message is multi-line; the whole body is one Rich ``Text``,
drawn wrapped with each line's rest under its value (:class:`DetailBody`), not at the margin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from hpctop.backends.kai import read as kai
from hpctop.model.history import JournalEntry
from hpctop.model.objects import Job, JobKey, Pod, Workload
from hpctop.model.store import Snapshot
from hpctop.model.topology import job_topology
from hpctop.scheduling.observed import FORECAST_MARK, OWN_SCHEDULER, merge
from hpctop.scheduling.types import JobPlan
from hpctop.tui.gpumap import NodeGpus, fill_glyph
from hpctop.tui.keymap import bindings
from hpctop.tui.rows import fmt_clock, fmt_duration, fmt_eta, is_held, order_source
from hpctop.tui.sanitize import DETAIL_CAP, sanitize_display
from hpctop.tui.screens.confirm import HangingText
from hpctop.tui.topology_text import topology_lines
from hpctop.tui.widgets.footer import FittedFooter

if TYPE_CHECKING:
    from textual.app import RenderResult

    from hpctop.actions.audit import AuditRecord
    from hpctop.sources.kube.events import EventRow


def _s(value: object, cap: int = 1024) -> str:
    return sanitize_display(str(value), cap=cap)


def _priority_value(job: Job, snapshot: Snapshot) -> str:
    """The job's priority value: its pods' (admission resolved it into ``spec.priority``), else
    the value its PriorityClass object gives, which admission will resolve for its pods (a held
    job has no pods yet: "value -" read as a job without a priority)."""
    if job.priority_value is not None:
        return f"value {job.priority_value}"
    classes = snapshot.priority_classes
    if job.priority_class:
        known = classes.get(job.priority_class)
        if known is None:
            return "value unknown: no such PriorityClass"
        return f"value {known.value}, from the PriorityClass: no pods yet"
    default = next((c for c in classes.values() if c.global_default), None)
    if default is not None:  # admission gives a pod without a class the global default's value
        return f"value {default.value}, the global default {_s(default.name)}'s: no pods yet"
    return "value 0: no class and no global default"


def detail_text(
    job: Job | None,
    plan: JobPlan | None,
    snapshot: Snapshot,
    now: float,
    journal: list[JournalEntry],
    nodes: dict[str, NodeGpus],
    audit: Sequence[AuditRecord] | None = None,
    events: Sequence[EventRow] | None = None,
    scheduler_position: str | None = None,
    order: int | None = None,
) -> Text:
    """The detail body. ``audit``: the local audit log's records of this job (live sessions only),
    shown under the console's own journal so a request's intent, outcome and ``Audit-Id`` are at
    hand; ``None`` (the simulator) leaves that part out. ``events``: the Kubernetes Events of the
    job's owner and pods (live sessions only, fetched in the background), likewise.
    ``scheduler_position``: where the cluster's own scheduler says the job waits (Kueue's visibility
    API), shown beside hpctop's own position; cluster text, so sanitised here. ``order``: the job's
    ORDER as the jobs pane shows it (its place among the jobs still waiting)."""
    t = Text()
    if job is None:
        # A cancelled job leaves the cluster; what was done to it (and the server's answers) stays.
        t.append("This job is no longer in the cluster.\n", style="bold")
        _actions_section(t, journal, audit)
        return t
    t.append(_s(job.id), style="bold")
    t.append(f"  {job.state.code} {job.state.value}", style="bold")
    t.append(f"   ({_s(job.owner_kind, 64)}, {job.kind.value})\n")
    t.append(f"user {_s(job.user)}  namespace {_s(job.namespace)}  uid {_s(job.uid, 64)}\n")
    part = plan.partition if plan and plan.partition else job.partition
    held = is_held(job, plan)
    t.append(f"queue {_s(job.queue or '-')}  ")
    if part and "," in part:  # the core joins the partitions a waiting job may use
        when = "once released" if held else "when it starts"
        t.append(f"eligible partitions {_s(part.replace(',', ', '))} (one, {when})  ")
    else:
        t.append(f"partition {_s(part or '-')}  ")
    t.append(f"priority class {_s(job.priority_class or '-')} ({_priority_value(job, snapshot)})\n")
    # a submit time of 0 is one the cluster did not say (a recording without creation times), not 1970
    known = job.submit_time > 0
    t.append(f"submitted {fmt_clock(job.submit_time) if known else '-'}")
    if job.start_time is not None:
        t.append(f"  started {fmt_clock(job.start_time)}")
        if known:
            t.append(f" (waited {fmt_duration(job.start_time - job.submit_time)})")
    if job.end_time is not None:
        t.append(f"  ended {fmt_clock(job.end_time)}")
    if job.time_limit:
        t.append(f"  time limit {fmt_duration(job.time_limit)}")
    t.append("\n")
    r = job.per_member
    t.append(
        f"gang {job.running_members}/{job.min_members} running of {job.members} members; per member "
        f"{r.gpu / 1000:g} GPU, {r.cpu / 1000:g} CPU, {r.memory / 2**30:.0f} GiB"
    )
    if job.gang is not None:
        t.append(
            f"  ({job.gang.style} gang, min {job.gang.min_member}, placeholders {job.gang.placeholders})"
        )
    t.append("\n")

    view = merge(job, plan)
    reason = view.reason
    if (view.binder or view.queue_layer) and (view.binder != OWN_SCHEDULER or view.queue_layer):
        owner = ", ".join(
            p
            for p in (
                f"binder {view.binder}" if view.binder else "",
                f"queue {view.queue_layer}" if view.queue_layer else "",
            )
            if p
        )
        t.append(f"Owner: {_s(owner, 200)}\n")
    if job.state.is_pending or reason is not None:
        t.append("\nWhy pending\n", style="bold underline")
        if reason is not None:
            said = "hpctop's forecast, " if view.reason_source == "forecast" else ""
            evidence = _s(reason.source, 200)
            t.append(f"  {reason.code.value} (Slurm: {reason.code.slurm})  {said}evidence: {evidence}\n")
            if reason.message:
                t.append("  ")
                t.append(sanitize_display(reason.message, cap=DETAIL_CAP, keep_newlines=True))
                t.append("\n")
        elif plan is not None and plan.placement is not None:
            # "Why pending" over nothing but an ETA of now read as a missing reason (REASON is empty)
            if view.binder == OWN_SCHEDULER and view.queue_layer is None:
                t.append(
                    "  nothing holds it back: placed in the scheduler's last pass, it starts when bound\n"
                )
            else:
                t.append("  its scheduler gives no reason; hpctop's core would place it now (a forecast)\n")
        estimate = order_source(view) == "forecast"
        who = _s(view.queue_layer or view.binder or "its scheduler", 64)
        if order is not None and not held and estimate:
            t.append(
                f"  ORDER {FORECAST_MARK}{order}: hpctop's estimate of its place among the jobs waiting "
                f"(not {who}'s own order)\n"
            )
        elif order is not None and not held:
            t.append(f"  ORDER {order}: the scheduler tries it {order}. among the jobs waiting\n")
        elif plan is not None and plan.order is not None and not held and estimate:
            t.append(f"  hpctop's estimate: {who} tries it about {plan.order + 1}. among the pending jobs\n")
        elif plan is not None and plan.order is not None and not held:
            t.append(f"  tried {plan.order + 1}. in the scheduler's last pass over the pending jobs\n")
        elif held:
            t.append("  not in the scheduler's order while held: release it (u) to queue it again\n")
        if scheduler_position:
            t.append(f"  {_s(scheduler_position, 200)}\n")
        if plan is not None and held:
            t.append("  ETA none while held\n")
        elif plan is not None:
            t.append(f"  ETA {fmt_eta(view.eta, now) or 'unknown'}")
            if view.eta is not None:
                t.append(f" ({fmt_clock(view.eta)})")
                if view.eta_source == "forecast":
                    t.append(" hpctop's forecast")
            t.append("\n")
            if view.ordering_note:
                t.append(f"  {view.ordering_note}\n")
            if plan.reserved_nodes:
                t.append(f"  reserved nodes: {_s(', '.join(plan.reserved_nodes), 400)}\n")

    if plan is not None:
        t.append("\nPriority (like sprio)\n", style="bold underline")
        t.append(f"  {'factor':<12}{'value':>8}{'weighted':>10}\n", style="dim")
        for name, factor in plan.priority.factors.items():
            weighted = plan.priority.weighted.get(name, 0.0)
            t.append(f"  {_s(name, 12):<12}{factor:>8.3f}{weighted:>10.0f}\n")
        summed = round(sum(plan.priority.weighted.values()))
        if held and plan.priority.total != summed:
            # Slurm sets a held job's priority to 0; the factors say what it gets back on release
            t.append(f"  {'sum':<12}{'':>8}{summed:>10}\n")
            t.append(f"  {'total':<12}{'':>8}{plan.priority.total:>10}", style="bold")
            t.append("  (0 while held, as Slurm; the sum above once released)\n")
        else:
            t.append(f"  {'total':<12}{'':>8}{plan.priority.total:>10}\n", style="bold")

    pods: list[Pod] = snapshot.job_pods(job)
    t.append("\nPods\n", style="bold underline")
    if not pods:
        t.append("  (none)\n")
    for pod in pods[:200]:
        # indices, labelled: "GPUs 0" read as "no GPUs" when it meant GPU number 0
        indices = pod.gpu_indices
        gpus = (
            f"GPU #{indices[0]}"
            if len(indices) == 1
            else f"GPUs #{','.join(map(str, indices))}"
            if indices
            else "GPU # -"
        )
        t.append(f"  {_s(pod.name, 80):<32} {pod.phase:<10} node {_s(pod.node_name or '-', 64):<16} {gpus}")
        if pod.restart_count:
            t.append(f" restarts {pod.restart_count}")
        if pod.claims is not None and pod.claims.claim_names():
            # DRA: the GPUs are held through these claims (resource.k8s.io), not a device count
            t.append(f"  ResourceClaim {_s(', '.join(pod.claims.claim_names()), 200)}")
        for device, health in (pod.claims.health if pod.claims is not None else ())[:8]:
            if health != "Healthy":
                t.append(f"  {_s(device, 120)} {_s(health, 16)}", style="bold")
        t.append("\n")
    if len(pods) > 200:
        t.append(f"  … {len(pods) - 200} more\n")
    # KAI's reservation pods hold the physical GPUs this job's shares split (no job row of their own)
    for reservation in kai.reservations_of(pods, snapshot.pods)[:16]:
        t.append(
            f"  GPU held for these shares by KAI reservation pod {_s(reservation.namespace, 64)}/"
            f"{_s(reservation.name, 80)} on {_s(reservation.node_name or '-', 64)}\n"
        )

    if job.nodes:
        t.append("\nPlacement\n", style="bold underline")
        for name in job.nodes[:64]:
            ng = nodes.get(name)
            t.append(f"  {_s(name, 64):<16} ")
            if ng is None:
                t.append("?\n")
                continue
            for slot in ng.slots:
                mine = any(h[0] == job.id for h in slot.holders)
                t.append(fill_glyph(slot.used), style="bold reverse" if mine else "dim")
            t.append(f"  {ng.used / 1000:g}/{ng.total / 1000:g} GPUs  ({_s(ng.model, 64)})\n")

    topology = job_topology(job, snapshot.objects, snapshot.nodes)
    if topology is not None:
        t.append("\nTopology\n", style="bold underline")
        for line in topology_lines(topology):
            t.append(sanitize_display(line, cap=4096) + "\n")

    workload: Workload | None = snapshot.workloads.get(job.key)
    if workload is not None and workload.conditions:
        t.append("\nConditions\n", style="bold underline")
        for c in workload.conditions:
            t.append(f"  {_s(c.type, 64)}={_s(c.status, 16)} {_s(c.reason, 128)}: ")
            t.append(sanitize_display(c.message, cap=4096, keep_newlines=True))
            t.append("\n")

    if events is not None:
        t.append("\nEvents\n", style="bold underline")
        if not events:
            t.append("  (none yet)\n")
        for e in events[-50:]:
            when = fmt_clock(e.last_time) if e.last_time is not None else "-"
            count = f" x{e.count}" if e.count > 1 else ""
            t.append(
                f"  {when} {_s(e.type, 8):<8} {_s(e.reason, 32)}{count} ",
                style="bold" if e.type == "Warning" else "",
            )
            t.append(f"{_s(e.kind, 16)}/{_s(e.name, 64)}: ", style="dim")
            t.append(sanitize_display(e.message, cap=1024))
            t.append("\n")

    _actions_section(t, journal, audit)
    return t


#: seconds between a journal entry and an audit record of the same action that make them one
SAME_ACTION_WITHIN = 120.0


def _actions_section(t: Text, journal: list[JournalEntry], audit: Sequence[AuditRecord] | None) -> None:
    t.append("\nActions from this console\n", style="bold underline")
    # An action this console sent is in the audit log too (intent and outcome, with the server's
    # answer): listed there, it is not repeated here; what never reached the log (refused before
    # sending) stays.
    if audit:
        journal = [
            e
            for e in journal
            if not any(r.action == e.action and abs(r.ts - e.at) <= SAME_ACTION_WITHIN for r in audit)
        ]
    if not journal:
        t.append("  (none)\n" if not audit else "  (in the audit log below)\n")
    for e in journal:
        t.append(f"  {fmt_clock(e.at)} {e.action:<8} {'ok' if e.ok else 'FAILED'}  ")
        t.append(sanitize_display(e.message, cap=400))
        t.append("\n")
    if audit is not None:
        t.append("  audit log (every request sent, from any hpctop on this machine):\n", style="dim")
        if not audit:
            t.append("    (none)\n")
        for rec in audit:
            ok = "-" if rec.ok is None else ("ok" if rec.ok else "FAILED")
            status = "" if rec.status is None else f" HTTP {rec.status}"
            t.append(f"    {_s(rec.time, 32)} {_s(rec.phase, 16):<8} {_s(rec.action, 16):<8} {ok}{status} ")
            t.append(sanitize_display(f"{rec.method} {rec.message}".strip(), cap=400))
            if rec.audit_id:
                t.append(f"  Audit-Id {_s(rec.audit_id, 64)}", style="dim")
            t.append("\n")


def value_hang(plain: str) -> int:
    """Where a wrapped detail line goes on: a field line ("queue …  partition …") under its first
    value, past the label; a line of a section (indented) two cells in from its own indent. Rich
    wrapped the body at the margin, so a long line's rest read as a line of its own."""
    indent = len(plain) - len(plain.lstrip(" "))
    if indent:
        return indent + 2
    label = plain.find(" ")
    return label + 1 if 0 < label < 16 else 2


class DetailBody(Static):
    """The detail's text, each wrapped line going on under its value (:func:`value_hang`);
    ``render()`` is the text itself, and its ``str()`` the whole unwrapped text (tests read it)."""

    def set_text(self, text: Text) -> None:
        self.update(HangingText(text, value_hang))

    def render(self) -> RenderResult:
        return self.content  # the HangingText (Static's visual of it has no text of its own)


class JobDetailScreen(Screen[None]):
    BINDINGS = list(bindings("detail"))  # noqa: RUF012

    def __init__(self, key: JobKey, build: Callable[[JobKey], Text]) -> None:
        super().__init__()
        self.key = key
        self._build = build

    def compose(self) -> ComposeResult:
        body = DetailBody(id="detail-text")
        body.set_text(self._build(self.key))
        with VerticalScroll(id="detail-body"):
            yield body
        yield FittedFooter()

    def refresh_body(self) -> None:
        self.query_one("#detail-text", DetailBody).set_text(self._build(self.key))

    def action_close(self) -> None:
        self.dismiss(None)
