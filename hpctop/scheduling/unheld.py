"""Running members no known node holds, counted per job and kept between cycles.

Why: a queue's ``used`` as a pane draws it against the cluster leaves out the running members
that no node of the view holds (bound to a node outside the node list, beyond their node's
allocatable, or gone: issue 16, 20,032 of 20,000 GPUs used); the core counted them for every
running job each cycle (17k at P6's 10k x 50k), though an event changes the count of a few.
``memo.Memo`` keeps one :class:`UnheldMembers` and ``core._Cycle._roll_up`` asks it each full
cycle. ``tests/scheduling/test_scheduling_kept_sums.py`` compares its counts with a count over
every running job after random snapshot changes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from hpctop.model.objects import Job, JobKey, PodKey


class UnheldMembers:
    """Per running job, its members counted as running that no known node holds, kept between cycles.

    What ``core._Cycle._count_unheld`` counted for every running job each cycle (17k at P6's
    size): ``members - pending`` less the job's pods that hold a charge on a node of the view and
    are not beyond their node's allocatable (``KeptFree.over``). That is a function of the job
    object and of the charge and over status of its own pods, so a job is counted again only when
    it changed (``JobSplit.take_active_changes``) or one of its pods' charges did (the pods of
    the nodes whose free state was redone: ``memo.Memo.charged``); everything is counted again
    when the free state or the job split was rebuilt, or when two running jobs claim one pod
    (the owner map below cannot say which to count again).
    """

    __slots__ = ("counts", "jobs", "kept", "owners", "shared")

    def __init__(self) -> None:
        self.kept: object = None  # the KeptFree the counts were taken against
        self.jobs: dict[JobKey, Job] = {}  # the running jobs counted (all of them)
        self.owners: dict[PodKey, JobKey] = {}  # pod -> the running job listing it
        self.counts: dict[JobKey, int] = {}  # jobs with unheld members only
        self.shared = False

    @staticmethod
    def count(job: Job, charges: Mapping[PodKey, object], over: Collection[PodKey]) -> int:
        running = job.members - len(job.pending_pods)
        if running <= 0:
            return 0
        held = sum(map(charges.__contains__, job.pods))  # (in C)
        if over and held:
            held -= sum(1 for key in job.pods if key in over and key in charges)
        return running - held if held < running else 0

    def update(
        self,
        active: Mapping[JobKey, Job],
        changes: list[tuple[JobKey, Job | None, Job | None]] | None,
        kept: object,
        charged: Collection[PodKey] | None,
        charges: Mapping[PodKey, object],
        over: Collection[PodKey],
    ) -> Mapping[JobKey, int]:
        """The unheld members of every running job that has any (job key -> count)."""
        if changes is None or charged is None or kept is not self.kept or self.shared:
            self.kept = kept
            self.shared = False
            self.jobs = dict(active)
            owners: dict[PodKey, JobKey] = {}
            for key, job in active.items():
                for pod in job.pods:
                    if owners.setdefault(pod, key) != key:
                        self.shared = True
            self.owners = owners
            counts = {}
            for key, job in active.items():
                n = self.count(job, charges, over)
                if n:
                    counts[key] = n
            self.counts = counts
            return counts
        net: dict[JobKey, list[Job | None]] = {}  # per job: the first old and the last new object
        for key, was, now in changes:
            found = net.get(key)
            if found is None:
                net[key] = [was, now]
            else:
                found[1] = now
        owners, jobs, counts = self.owners, self.jobs, self.counts
        for key, (was, _) in net.items():  # every pod of a changed job out first, then the new ones in
            if was is not None:
                for pod in was.pods:
                    if owners.get(pod) == key:
                        del owners[pod]
                del jobs[key]
        for key, (_, now) in net.items():
            if now is not None:
                for pod in now.pods:
                    if owners.setdefault(pod, key) != key:
                        self.shared = True
                jobs[key] = now
        if self.shared:  # a pod of two running jobs: the owner map cannot say whom to count again
            return self.update(active, None, kept, None, charges, over)
        dirty = set(net)
        get = owners.get
        for pod in charged:
            owner = get(pod)
            if owner is not None:
                dirty.add(owner)
        for key in dirty:
            counted = jobs.get(key)
            n = 0 if counted is None else self.count(counted, charges, over)
            if n:
                counts[key] = n
            else:
                counts.pop(key, None)
        return counts
