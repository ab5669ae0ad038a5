"""Row view-models for the jobs pane: built once per changed job, sanitised at the door.

The jobs pane must stay quick at 100k jobs (PERFORMANCE.md P5), so per tick it must not rebuild
100k rows. Model objects are frozen and replaced on change, so a row is cached against the identity
of its ``Job`` and ``JobPlan``: a tick where 50 jobs changed builds 50 rows. This is also the one
ingestion point of RELIABILITY.md §3.3: every cluster string is passed through
:func:`sanitize_display` here, and widgets draw the row's fields as data.

Sorting and filtering are plain list operations over these rows (a key function, a lowercase
substring over a precomputed haystack), which take tens of milliseconds at 100k rows; the widget only
renders the visible slice.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import attrgetter, eq, is_not

from hpctop.model.objects import Job, JobKey
from hpctop.model.states import JobState, ReasonCode
from hpctop.runtime.slurm_join import SLURM_REASON_SOURCE
from hpctop.scheduling.observed import FORECAST_MARK, OWN_SCHEDULER, JobView, merge
from hpctop.scheduling.types import JobPlan
from hpctop.tui.diffmap import MapDiff, diff, without
from hpctop.tui.sanitize import sanitize_display

CELL = 256  # table cells are short; the detail screen shows the full (sanitised) value


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the jobs pane: its preferred width, the narrowest it may get (``flex`` columns
    take the room left over, up to ``width``) and its priority: a narrow terminal drops the columns
    with the highest number first, so the job, its state and why it waits stay on any screen."""

    name: str
    width: int
    align: str = "left"  # left | right
    priority: int = 0
    min_width: int = 0
    flex: bool = False


COLUMNS: tuple[Column, ...] = (
    # JOB is namespace/name: one column (a separate NAME only repeated the part after the slash)
    Column("JOB", 32, priority=0, min_width=22, flex=True),
    # 80 columns (squeue's default set): JOB, USER, ST, ORDER, GPUS, TIME and a REASON that can
    # be read; PRIO (sprio's, also in the detail), PARTITION and ETA come in from 100 columns
    Column("USER", 8, priority=2),
    Column("QUEUE", 20, priority=6),
    Column("PARTITION", 9, priority=4),
    Column("ST", 2, priority=0),
    # the core's evaluation order of pending jobs (YuniKorn's two steps: lowest-share queue, then
    # highest priority): why a job with a higher PRIO can wait behind one with a lower
    Column("ORDER", 6, "right", priority=1),
    Column("PRIO", 6, "right", priority=3),
    Column("GANG", 5, "right", priority=7),
    Column("GPUS", 5, "right", priority=1),
    # TIME as squeue: run time, 0:00 until the job starts; WAIT: time since submission until start
    Column("TIME", 9, "right", priority=2),
    Column("WAIT", 9, "right", priority=6),
    Column("ETA", 9, "right", priority=5),
    # the narrowest REASON still holds most reason words whole (QuotaExceeded, NodeUnavailable)
    Column("REASON", 24, priority=0, min_width=15, flex=True),
)
COLUMN_NAMES = tuple(c.name for c in COLUMNS)
#: sort keys that are no column of their own (code and tests may sort by them)
EXTRA_SORT_KEYS = ("ID", "NAME")
SORT_KEYS = COLUMN_NAMES + EXTRA_SORT_KEYS


def fit_columns(width: int) -> list[tuple[Column, int]]:
    """The columns shown in ``width`` cells (each plus a one-cell gap), in display order, with
    their widths: columns go in by priority until the next one's narrowest width does not fit (the
    must-haves, priority 0, always: JOB, ST, REASON), then the flexible
    ones grow towards their preferred width with what is left (REASON first: a pending job's reason
    is what a narrow screen is for; then JOB), and a wide terminal gives REASON the rest."""
    chosen: set[str] = set()
    used = 0
    for col in sorted(COLUMNS, key=lambda c: c.priority):
        need = (col.min_width if col.flex else col.width) + 1
        if used + need > width and col.priority > 0:
            # strictly by priority: a narrow GANG slipping in where PRIO did not fit made columns
            # come and go one cell apart (PRIO at 81 columns, GANG instead at 80)
            break
        chosen.add(col.name)
        used += need
    shown = [c for c in COLUMNS if c.name in chosen]
    widths = {c.name: (c.min_width if c.flex else c.width) for c in shown}
    spare = width - used
    if spare < 0:  # narrower than the must-haves: REASON gives up what is missing (down to 4 cells)
        widths["REASON"] = max(widths["REASON"] + spare, 4)
    for col in sorted((c for c in shown if c.flex), key=lambda c: c.name != "REASON"):
        grow = min(col.width - widths[col.name], max(spare, 0))
        widths[col.name] += grow
        spare -= grow
    if spare > 0:  # a wide terminal: REASON takes the rest (reasons are the longest text)
        for col in shown:
            if col.name == "REASON":
                widths[col.name] += spare
    return [(c, widths[c.name]) for c in shown]


@dataclass(frozen=True, slots=True)
class JobRow:
    key: JobKey
    uid: str
    id: str
    name: str
    user: str
    queue: str
    partition: str
    state: JobState
    prio: int
    running: int
    min_members: int
    gpus: float
    submit: float
    start: float | None
    end: float | None
    eta: float | None
    reason: str
    #: the core's evaluation order of pending jobs (ScheduleResult.pending_order, 1-based); None:
    #: not waiting its turn (running, finished, or held: the scheduler passes a held job over)
    order: int | None
    #: the ORDER sort key (:func:`order_key`), kept on the row so the default sort is C-level
    order_sort: int
    haystack: str  # lowercase text of every column, for "/" filtering
    category: str  # pending | running | done | other: precomputed for counts and quick filters
    #: "forecast" when the ETA is hpctop's estimate for another scheduler's job (shown with "~")
    eta_source: str | None = None
    #: "forecast" when ORDER is hpctop's estimate of another scheduler's order (KAI, Kueue,
    #: Volcano, YuniKorn: shown with "~", as the ETA), "scheduler" when hpctop's own scheduler owns
    #: the job (its order is the truth); None when the job is not waiting its turn
    order_source: str | None = None

    @property
    def st(self) -> str:
        return self.state.code

    @property
    def gang(self) -> str:
        return f"{self.running}/{self.min_members}"

    def elapsed(self, now: float) -> float:
        """Run time, as squeue's TIME: 0 until the job starts (then up to now, or to its end)."""
        if self.start is None:
            return 0.0
        return max((self.end or now) - self.start, 0.0)

    def waited(self, now: float) -> float:
        """Time from submission to start (to now while it has not started; to its end if it never did)."""
        until = self.start if self.start is not None else (self.end or now)
        return max(until - self.submit, 0.0)


def fmt_duration(seconds: float | None) -> str:
    """Slurm-like: ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``."""
    if seconds is None:
        return ""
    s = int(max(seconds, 0))
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{s:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{s:02d}"
    return f"{minutes}:{s:02d}"


def fmt_gpus(gpus: float) -> str:
    """``8``, ``0.81`` (a share of a GPU), ``-`` for a job that asks for no GPU: ``hpctop jobs``
    writes it so (as squeue leaves TRES empty), and a column of 0s read as jobs given nothing."""
    if not gpus:
        return "-"
    return f"{gpus:g}" if gpus < 100 else f"{gpus:.0f}"


def fmt_eta(eta: float | None, now: float) -> str:
    if eta is None:
        return ""
    return "now" if eta <= now else "+" + fmt_duration(eta - now)


def fmt_clock(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


_order_of = attrgetter("order")
_key_of = attrgetter("key")
_order_and_key = attrgetter("order", "key")


def waiting_ranks(rows: Sequence[JobRow]) -> dict[JobKey, int]:
    """Each waiting job's place (1, 2, ...) in the core's evaluation order of the jobs still
    waiting: the core's own numbers also count the jobs it placed or passed over in that pass."""
    waiting = list(compress(rows, map(is_not, map(_order_of, rows), repeat(None))))
    # by the order number alone (a C-level int sort; sorting (order, key) tuples was the most of
    # it at 100k rows); equal numbers (two schedulers' numbers in one view) then by key, which
    # is the (order, key) sort's answer
    waiting.sort(key=_order_of)
    orders = list(map(_order_of, waiting))
    if any(map(eq, orders, islice(orders, 1, None))):
        waiting.sort(key=_order_and_key)
    return dict(zip(map(_key_of, waiting), range(1, len(waiting) + 1), strict=True))


#: TIME's label where WAIT is not shown and TIME holds a waiting job's wait (:func:`cells`)
TIME_OR_WAIT = "TIME/WAIT"


def cells(row: JobRow, now: float, rank: int | None = None, wait_in_time: bool = False) -> tuple[str, ...]:
    """The displayed text of each column, in :data:`COLUMNS` order; ``rank``: the ORDER shown
    (:func:`waiting_ranks`; without it, the core's own number). ``wait_in_time``: the pane is too
    narrow for WAIT (80 columns), so a job that has not started shows its wait under TIME (labelled
    :data:`TIME_OR_WAIT`): its run time, squeue's 0:00, said nothing, and the wait was nowhere."""
    order = rank if rank is not None else row.order
    waited = fmt_duration(row.waited(now)) if row.submit > 0 else ""  # 0: not known (no 1970 submits)
    if wait_in_time and row.start is None and row.end is None:  # still waiting (not ended unstarted)
        time_text = waited
    else:
        time_text = fmt_duration(row.elapsed(now))
    return (
        row.id,
        row.user,
        row.queue,
        row.partition,
        row.st,
        "" if row.order is None or order is None else _order_text(row, order),
        str(row.prio),
        row.gang,
        fmt_gpus(row.gpus),
        time_text,
        waited,
        (FORECAST_MARK if row.eta_source == "forecast" and row.eta is not None else "")
        + (fmt_eta(row.eta, now) if row.state.is_pending else ""),
        row.reason,
    )


def _order_text(row: JobRow, order: int) -> str:
    return (FORECAST_MARK if row.order_source == "forecast" else "") + str(order)


def order_source(view: JobView) -> str | None:
    """Whose word the job's ORDER is (ARCHITECTURE.md "observed vs forecast"): the core's order is
    the scheduler's own only where hpctop's scheduler binds the job and no queueing layer (KAI's
    queues, Kueue, ...) decides when it starts, the same test :func:`merge` makes for the ETA."""
    if view.order is None:
        return None
    ours = view.binder == OWN_SCHEDULER and view.queue_layer is None
    return "scheduler" if ours else "forecast"


def is_held(job: Job, plan: JobPlan | None) -> bool:
    """Held (suspended by a user or admin): the scheduler passes it over, whatever its factors."""
    reason = (plan.reason if plan else None) or job.observed_reason
    return job.state is JobState.HELD or (reason is not None and reason.code is ReasonCode.HELD)


def queue_order(job: Job, plan: JobPlan | None) -> int | None:
    """The job's 1-based place in the core's evaluation order, or None (not pending, or held)."""
    if plan is None or plan.order is None or not job.state.is_pending or is_held(job, plan):
        return None
    return plan.order + 1


def _cell(text: str) -> str:
    """``sanitize_display(text, cap=CELL)``, without the call for the short printable ASCII text
    that nearly every name, user and queue is (the function returns that text as it is)."""
    if len(text) <= CELL and text.isascii() and text.isprintable():
        return text
    return sanitize_display(text, cap=CELL)


#: REASON of a waiting job the core placed in its last pass (no reason holds it back; squeue says
#: "None"): hpctop's forecast that it starts next, marked as one (ARCHITECTURE.md "observed first,
#: forecast labelled"), on the demo too
PLACED_NEXT = FORECAST_MARK + "starts next"


def make_row(job: Job, plan: JobPlan | None) -> JobRow:
    """One job's row. Why :func:`merge` only for a pending job: of its view the row reads the
    reason, the ETA and the order, and each is None for a job that is not pending (``merge`` and
    :func:`queue_order` say so), so a running or finished job's row needs no owner lookup (P4's
    first view builds a row per job: most of them running)."""
    return _row(job, plan, _cell(job.id), _cell(job.name), _cell(job.user), _cell(job.queue or ""))


def replan_row(row: JobRow, job: Job, plan: JobPlan | None) -> JobRow:
    """``make_row(job, plan)`` for the job ``row`` was made from (the same ``Job`` object), with a
    different plan: the sanitised id, name, user and queue cells are the old row's.

    Why (issue 16, P4): the console shows the rows of a big cluster while its first lists stream
    in, without plans (the core waits for the last list), so the first core run gives every row a
    plan its row did not have: each row was built twice from nothing. The plan changes none of
    these four cells; what it does change (partition, PRIO, reason, ETA, order, the haystack) is
    computed as :func:`make_row` does (``tests/tui/test_rows_replan.py``: equal to a fresh build)."""
    return _row(job, plan, row.id, row.name, row.user, row.queue)


def _row(job: Job, plan: JobPlan | None, row_id: str, name: str, user: str, queue: str) -> JobRow:
    """The row of ``job`` under ``plan``, given its four job-only cells already sanitised."""
    state = job.state
    pending = state.is_pending
    reason = ""
    eta: float | None = None
    eta_source: str | None = None
    view: JobView | None = None
    if pending:
        view = merge(job, plan)
        r = view.reason
        # a Slurm job's reason is Slurm's own word (Resources, Priority, JobHeldUser), as squeue's
        reason = (r.message if r.source == SLURM_REASON_SOURCE else r.code.value) if r else ""
        if r is None and plan is not None and plan.placement is not None:
            reason = PLACED_NEXT  # squeue's "None"; REASON was empty: the core's word, marked so
        eta = view.eta
        eta_source = view.eta_source
    elif state.is_finished:
        reason = state.value
    partition = _cell((plan.partition if plan and plan.partition else job.partition) or "")
    prio = plan.priority.total if plan else (job.priority_value or 0)
    order = queue_order(job, plan) if pending else None
    category = _CATEGORY[state]
    hay = " ".join((row_id, name, user, queue, partition, state.code, state.value, reason)).lower()
    return JobRow(
        key=job.key,
        uid=job.uid,
        id=row_id,
        name=name,
        user=user,
        queue=queue,
        partition=partition,
        state=state,
        prio=prio,
        running=job.running_members,
        min_members=job.min_members,
        gpus=job.per_member.gpu * job.members / 1000,
        submit=job.submit_time,
        start=job.start_time,
        end=job.end_time,
        eta=eta,
        reason=reason,
        order=order,
        order_sort=order_key(order, category, prio),
        haystack=hay,
        category=category,
        eta_source=eta_source,
        order_source=order_source(view) if order is not None and view is not None else None,
    )


def _category(state: JobState) -> str:
    if state.is_pending:
        return "pending"
    if state.is_active:
        return "running"
    if state.is_finished:
        return "done"
    return "other"


#: each state's category, looked up once per row instead of three predicate calls
_CATEGORY: dict[JobState, str] = {state: _category(state) for state in JobState}


#: every field of a ``Job`` that :func:`_row` reads for a job that is not pending (a pending
#: job's row also reads what :func:`merge` and :func:`queue_order` do: its owner, its reasons)
_ROW_INPUTS = attrgetter(
    "key",
    "namespace",
    "name",
    "uid",
    "user",
    "queue",
    "state",
    "partition",
    "priority_value",
    "running_members",
    "min_members",
    "per_member.gpu",
    "members",
    "submit_time",
    "start_time",
    "end_time",
)


def same_row(old: Job, new: Job) -> bool:
    """Whether ``make_row(new, plan)`` equals ``make_row(old, plan)`` under the same plan: ``new``
    is not pending and equal to ``old`` in every field such a row reads (:data:`_ROW_INPUTS`).

    Why (issue 16, K1): most watch events re-derive a running job whose row shows nothing new (a
    restart count, a condition, a resourceVersion); at 5,000 events/s the tick worker rebuilt
    ~2,500 such rows per 0.5 s tick (sanitised cells, the haystack, a 25-field row and its
    comparison with the old one) only to keep the old row. One tuple of 16 attributes per job,
    compared at C speed, says the same thing. A pending job is always rebuilt (its reason and
    ETA come from :func:`merge`, which reads more of the job)."""
    return not new.state.is_pending and _ROW_INPUTS(old) == _ROW_INPUTS(new)


PlanSig = tuple[int, str | None, float | None, str | None, int | None] | None


def reprio_row(row: JobRow, prev: Job, job: Job, old_sig: PlanSig, sig: PlanSig) -> JobRow | None:
    """``make_row(job, plan)`` from ``row`` (made from ``prev`` under a plan of ``old_sig``) with
    only PRIO (and ORDER's sort key) replaced, where that is all that can differ: ``job`` is not
    pending, is ``prev`` or :func:`same_row` with it, and both plans name the same partition (a
    row that is not pending reads no other part of a plan). None where anything else may differ.

    Why (issue 16, K1): a running job's plan carries a priority with today's fair-share factor,
    which moves at every core run on a busy cluster, so each run changed the PRIO of every
    running job: at 50k pods the next tick rebuilt ~50k rows from nothing (~1.4 s of the tick
    worker, the reflector starved meanwhile). Copying the other 21 fields is ~3x cheaper."""
    if old_sig is None or sig is None or old_sig[1] != sig[1] or job.state.is_pending:
        return None
    if prev is not job and not same_row(prev, job):
        return None
    prio = sig[0]
    if prio == row.prio:
        return row
    return JobRow(
        row.key,
        row.uid,
        row.id,
        row.name,
        row.user,
        row.queue,
        row.partition,
        row.state,
        prio,
        row.running,
        row.min_members,
        row.gpus,
        row.submit,
        row.start,
        row.end,
        row.eta,
        row.reason,
        row.order,
        order_key(row.order, row.category, prio),
        row.haystack,
        row.category,
        row.eta_source,
        row.order_source,
    )


def next_row(
    old: JobRow | None,
    prev: Job | None,
    job: Job,
    plan: JobPlan | None,
    old_sig: PlanSig,
    sig: PlanSig,
) -> JobRow | None:
    """The row of ``job`` under ``plan`` (of signature ``sig``), given its last row ``old``, made from
    ``prev`` under a plan of ``old_sig``: None where ``old`` stands as it is (:func:`same_row`), else
    ``old`` with PRIO copied (:func:`reprio_row`), with its cells kept (:func:`replan_row`: the same
    job object), or a row built (:func:`make_row`). One rule for both of :class:`RowCache`'s paths."""
    if old is not None and prev is not None:
        if sig == old_sig:
            if prev is not job and same_row(prev, job):
                return None
        else:
            row = reprio_row(old, prev, job, old_sig, sig)  # a running job's PRIO moved
            if row is not None:
                return row
    return make_row(job, plan) if old is None or prev is not job else replan_row(old, job, plan)


def _sig(plan: JobPlan | None) -> PlanSig:
    """The parts of a plan a row shows: the core builds new plan objects every cycle, so identity
    would rebuild every row every tick; comparing these five values keeps rows that look the same."""
    if plan is None:
        return None
    reason = plan.reason
    return (
        plan.priority.total,
        plan.partition,
        plan.eta,
        reason.code.value if reason is not None else None,
        plan.order,
    )


class RowCache:
    """Rows by job key, rebuilt only for jobs that are new objects or whose plan shows differently.

    Why the work is proportional to what changed (issue 16, K1): the console's tick worker calls
    :meth:`rows` on every tick, and a loop over every job (a plan lookup and its signature per
    job) was ~180 ms CPU per tick at 50k jobs under K1's stream while ~50 rows had changed. When
    the plans are the object of the last call (the core did not run: the console's ticks between
    core runs), the jobs whose ``Job`` object changed are found by identity at C speed and only
    theirs are built; a plan that changed makes every plan's signature be compared, as before.
    A rebuilt row equal to the one it replaces (a restart count, a condition: most watch events
    change nothing a row shows) keeps the old row object, so the jobs pane's index
    (:meth:`hpctop.tui.jobindex.JobIndex.advance`) sees no change there at all; a job that is
    another object equal in every field its row reads (:func:`same_row`), under a plan that shows
    the same, keeps its row without building one (counted in ``reused``).
    """

    def __init__(self) -> None:
        self._job: dict[JobKey, Job] = {}
        self._sig: dict[JobKey, PlanSig] = {}
        self._row: dict[JobKey, JobRow] = {}
        self._last: tuple[object, object, list[JobRow]] | None = None
        self._keys: list[JobKey] = []
        #: whether the last call built any row or dropped one (False: same rows as before)
        self.changed = True
        self.counts: dict[str, int] = {}
        #: rows made by the last call (tests and benchmarks read it)
        self.built = 0
        #: changed jobs whose old row was kept without building one (:func:`same_row`)
        self.reused = 0

    def rows(self, jobs: Mapping[JobKey, Job], plans: Mapping[JobKey, JobPlan]) -> list[JobRow]:
        last = self._last
        if last is not None and last[0] is jobs and last[1] is plans:
            self.changed = False
            self.built = self.reused = 0
            return last[2]
        if last is not None and isinstance(last[0], Mapping):
            d = diff(last[0], jobs)
            if d is not None:
                return self._patch(jobs, plans, d, last)
        keys = list(jobs)
        if last is not None and last[1] is plans:
            changed = list(compress(keys, map(is_not, map(self._job.get, keys), jobs.values())))
        else:
            changed = self._replan(keys, jobs, plans)
        job_of, sig_of, row_of = self._job, self._sig, self._row
        get_plan = plans.get
        replaced = reused = 0
        for key in changed:
            job = jobs[key]
            plan = get_plan(key)
            old = row_of.get(key)
            sig = _sig(plan)
            row = next_row(old, job_of.get(key), job, plan, sig_of.get(key), sig)
            if row is None:
                job_of[key] = job  # another object, the same row (:func:`same_row`)
                reused += 1
                continue
            if old is None or (row is not old and old != row):
                row_of[key] = row
                replaced += 1
            job_of[key] = job
            sig_of[key] = sig
        dropped = len(job_of) - len(keys)
        if dropped:
            for key in job_of.keys() - jobs.keys():
                del job_of[key], sig_of[key], row_of[key]
        self.built, self.reused = len(changed) - reused, reused
        if last is not None and not replaced and not dropped and keys == self._keys:
            out = last[2]  # the same rows in the same order (no job came, left or moved)
            self.changed = False
        else:
            out = list(map(row_of.__getitem__, keys))
            self.changed = True
            self.counts = dict(Counter(map(_category_of, out)))
        self._last, self._keys = (jobs, plans, out), keys
        return out

    def _patch(
        self,
        jobs: Mapping[JobKey, Job],
        plans: Mapping[JobKey, JobPlan],
        d: MapDiff[JobKey, Job],
        last: tuple[object, object, list[JobRow]],
    ) -> list[JobRow]:
        """:meth:`rows` when the jobs map is the last one with jobs replaced, deleted or appended
        (:func:`~hpctop.tui.diffmap.diff`): the rows list of the last call patched at those
        positions, and the category counts adjusted, instead of 50k key lookups each."""
        keys = d.keys
        old_rows = last[2]
        if last[1] is plans:
            positions: Iterable[int] = (*d.replaced, *d.appended)
        else:
            positions = self._replan_at(d, plans)
        job_of, sig_of, row_of = self._job, self._sig, self._row
        counts = Counter(self.counts)
        out = without(old_rows, d.deleted) if d.deleted else list(old_rows)
        for i in d.deleted:
            key = self._keys[i]
            counts[old_rows[i].category] -= 1
            del job_of[key], sig_of[key], row_of[key]
        get_plan = plans.get
        built = replaced = reused = 0
        n_kept = len(d.kept)
        for i in positions:
            key, job = keys[i], d.values[i]
            plan = get_plan(key)
            old = out[i] if i < n_kept else None
            sig = _sig(plan)
            row = next_row(old, job_of.get(key), job, plan, sig_of.get(key), sig)
            if row is None:
                job_of[key] = job  # another object, the same row (:func:`same_row`)
                reused += 1
                continue
            built += 1
            if old is None or (row is not old and old != row):
                if old is not None:
                    counts[old.category] -= 1
                counts[row.category] += 1
                row_of[key] = row
                replaced += 1
            else:
                row = old
            if i < n_kept:
                out[i] = row
            else:
                out.append(row)
            job_of[key] = job
            sig_of[key] = sig
        self.built, self.reused = built, reused
        if not replaced and not d.deleted:
            out = old_rows  # the same rows in the same order (no job came, left or changed)
            self.changed = False
        else:
            self.changed = True
            self.counts = {c: n for c, n in counts.items() if n}
        self._last, self._keys = (jobs, plans, out), keys
        return out

    def _replan_at(self, d: MapDiff[JobKey, Job], plans: Mapping[JobKey, JobPlan]) -> list[int]:
        """:meth:`_replan` by position: the kept jobs that are other objects or whose plan shows
        differently, then every appended one."""
        keys, sig_of, get_plan = d.keys, self._sig, plans.get
        moved = set(d.replaced)
        out = []
        for i in range(len(d.kept)):
            if i in moved:
                out.append(i)
                continue
            key = keys[i]
            if sig_of.get(key) != _sig(get_plan(key)):
                out.append(i)
        out.extend(d.appended)
        return out

    def _replan(
        self, keys: list[JobKey], jobs: Mapping[JobKey, Job], plans: Mapping[JobKey, JobPlan]
    ) -> list[JobKey]:
        """The jobs whose row must be rebuilt when the plans are new: a new ``Job`` object, or a
        plan that shows differently (its five values, :func:`_sig`)."""
        get_job, get_sig, get_plan = self._job.get, self._sig.get, plans.get
        out = []
        for key, job in zip(keys, jobs.values(), strict=True):
            if get_job(key) is not job:
                out.append(key)
                continue
            sig = _sig(get_plan(key))
            if get_sig(key) != sig:
                out.append(key)
        return out


_category_of = attrgetter("category")


_STATE_ORDER = {s: i for i, s in enumerate(JobState)}


_AFTER_WAITING = {"running": 1, "pending": 2, "other": 3, "done": 4}


#: :func:`order_key`'s place of each group: the group's number times this, plus the place
#: within the group (under 2**64 for any order number and any priority of 64 bits or less)
_GROUP = 1 << 64
_MIDDLE = 1 << 63


def order_key(order: int | None, category: str, prio: int) -> int:
    """ORDER ascending: the jobs waiting their turn in the order the scheduler tries them, then
    running, held, other and finished jobs, each by priority (highest first).

    One int, ordered as the pair (group, place) would be: group 0 the waiting jobs by their order
    number, then group 1-4 by ``-prio``. An int because the jobs pane sorts 100k rows by it on
    every first paint, and ``sorted`` compares ints ~4x faster than pairs (at 100k rows of bench
    P5: 183 vs 49 ms CPU in one process, bench/README.md session 13). Priorities beyond 64 bits
    are clamped (none is: Kubernetes' are int32, Slurm's uint32); order numbers are counts.
    """
    if order is not None:
        return order
    place = _MIDDLE - max(-_MIDDLE + 1, min(prio, _MIDDLE - 1))
    return _AFTER_WAITING[category] * _GROUP + place


def sort_key(column: str, now: float) -> Callable[[JobRow], object]:
    keys: dict[str, Callable[[JobRow], object]] = {
        "JOB": lambda r: r.id,
        "ID": lambda r: r.id,
        "NAME": lambda r: r.name,
        "USER": lambda r: r.user,
        "QUEUE": lambda r: r.queue,
        "PARTITION": lambda r: r.partition,
        "ST": lambda r: _STATE_ORDER[r.state],
        "ORDER": lambda r: r.order_sort,
        "PRIO": lambda r: r.prio,
        "GANG": lambda r: (r.running, r.min_members),
        "GPUS": lambda r: r.gpus,
        "TIME": lambda r: r.elapsed(now),
        "WAIT": lambda r: r.waited(now),
        "ETA": lambda r: r.eta if r.eta is not None else float("inf"),
        "REASON": lambda r: r.reason,
    }
    return keys[column]


STATE_FILTERS: tuple[str, ...] = ("all", "pending", "running", "done")


@dataclass(frozen=True, slots=True)
class Filters:
    text: str = ""
    state: int = 0  # index into STATE_FILTERS
    queue: str | None = None
    partition: str | None = None
    user: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.text or self.state or self.queue or self.partition or self.user)

    def describe(self) -> str:
        parts = []
        if self.text:
            parts.append(f"/{self.text}")
        if self.state:
            parts.append(f"state={STATE_FILTERS[self.state]}")
        if self.queue is not None:
            parts.append(f"queue={self.queue}")
        if self.partition is not None:
            parts.append(f"partition={self.partition}")
        if self.user is not None:
            parts.append(f"user={self.user}")
        return " ".join(parts)


def apply_view(
    rows: Iterable[JobRow], filters: Filters, sort_column: str, reverse: bool, now: float
) -> list[JobRow]:
    """Filter, then sort (stable, so equal keys keep the previous order)."""
    out: Iterable[JobRow] = rows
    if filters.state:
        category = STATE_FILTERS[filters.state]
        out = [r for r in out if r.category == category]
    if filters.queue is not None:
        q = filters.queue
        sub = q + "."  # a parent queue (a double click in the queue pane) covers its children
        out = [r for r in out if r.queue == q or r.queue.startswith(sub)]
    if filters.partition is not None:
        p = filters.partition
        out = [r for r in out if r.partition == p]
    if filters.user is not None:
        u = filters.user
        out = [r for r in out if r.user == u]
    if filters.text:
        needle = filters.text.lower()
        out = [r for r in out if needle in r.haystack]
    result = list(out)
    result.sort(key=sort_key(sort_column, now), reverse=reverse)  # type: ignore[arg-type]
    return result
