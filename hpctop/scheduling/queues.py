"""The queue tree: guarantees, limits, usage roll-up, DRF shares and the fair-share factor.

Why: YuniKorn, Kueue and Volcano all share a cluster out through a hierarchy of queues with a
guaranteed and a maximum amount; hpctop models that one tree (dotted paths under ``root``) so the
ordering is the same whatever the backend. Queues named by jobs but missing from the policy are not
invented: such jobs go to the default queue, which is created (with its parents) if absent.

Limits: ``Resources`` cannot tell "0" from "unset", so a component of ``max`` that is 0 is read
as *no limit* on that resource (YuniKorn's rule for resources a queue does not list). Usage is
mutable during a cycle (placements add to the leaf and every ancestor), so the DRF order sees the
effect of each placement at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hpctop.model.policy import ROOT, Policy, QueueSpec, QueueState
from hpctop.model.resources import ZERO, Resources
from hpctop.scheduling.types import QueueStatus


def borrows(used: Resources, guaranteed: Resources) -> bool:
    """Whether ``used`` is above ``guaranteed`` on a resource the guarantee sets (a component > 0).

    A guarantee that names only GPUs says nothing about CPU or memory: using CPUs there is not
    borrowing anyone's guarantee, so it must not light the borrowing marker (a queue with no
    guarantee at all never borrows by this rule; its use is plain fair-share use).
    """
    if guaranteed.gpu > 0 and used.gpu > guaranteed.gpu:
        return True
    if guaranteed.cpu > 0 and used.cpu > guaranteed.cpu:
        return True
    if guaranteed.memory > 0 and used.memory > guaranteed.memory:
        return True
    return any(cap > 0 and used.get(key) > cap for key, cap in guaranteed.extended)


@dataclass(slots=True)
class QueueNode:
    spec: QueueSpec
    children: list[str] = field(default_factory=list)
    used: Resources = ZERO
    pending: Resources = ZERO
    running_jobs: int = 0
    pending_jobs: int = 0
    normalized_share: float = 0.0

    @property
    def path(self) -> str:
        return self.spec.path


class QueueTree:
    """Queues by path; ``resolve`` maps a job's queue to a path in the tree."""

    def __init__(self, policy: Policy) -> None:
        self.nodes: dict[str, QueueNode] = {}
        self._ancestors: dict[str, list[str]] = {}
        for spec in sorted(policy.queues, key=lambda q: q.path):
            self._add(spec)
        if ROOT not in self.nodes:
            self._add(QueueSpec(ROOT))
        default = policy.default_queue or ROOT
        self.default = default if default == ROOT or default.startswith(ROOT + ".") else f"{ROOT}.{default}"
        if self.default not in self.nodes:
            self._add(QueueSpec(self.default))
        for node in self.nodes.values():
            node.children.sort()

    def _add(self, spec: QueueSpec) -> None:
        if spec.path in self.nodes:
            # an explicit spec replaces an implicit parent created earlier
            self.nodes[spec.path].spec = spec
            return
        self.nodes[spec.path] = QueueNode(spec)
        parent = spec.parent
        if parent is None:
            return
        if parent not in self.nodes:
            self._add(QueueSpec(parent))
        self.nodes[parent].children.append(spec.path)

    def resolve(self, queue: str | None) -> str:
        """The tree path for a job's queue name (``root.``-prefix optional), else the default queue."""
        if queue:
            if queue in self.nodes:
                return queue
            prefixed = f"{ROOT}.{queue}"
            if prefixed in self.nodes:
                return prefixed
        return self.default

    def ancestors(self, path: str) -> list[str]:
        """The queue itself and every parent up to root (kept per path: the tree is fixed once built,
        and the cycle asks for each pending job's quota and each placement's usage)."""
        found = self._ancestors.get(path)
        if found is None:
            found = [path]
            parent = self.nodes[path].spec.parent
            while parent is not None and parent in self.nodes:
                found.append(parent)
                parent = self.nodes[parent].spec.parent
            self._ancestors[path] = found
        return found

    def tree_order(self) -> list[str]:
        """Depth-first from root, children sorted by name."""
        out: list[str] = []
        roots = sorted(
            p for p, n in self.nodes.items() if n.spec.parent is None or n.spec.parent not in self.nodes
        )
        stack = list(reversed(roots))
        while stack:
            path = stack.pop()
            out.append(path)
            stack.extend(reversed(self.nodes[path].children))
        return out

    def add_used(self, path: str, amount: Resources) -> None:
        for p in self.ancestors(path):
            self.nodes[p].used = self.nodes[p].used + amount

    def closed(self, path: str) -> str | None:
        """The first closed queue on the path to root, if any."""
        for p in self.ancestors(path):
            if self.nodes[p].spec.state == QueueState.CLOSED:
                return p
        return None

    def over_max(self, path: str, amount: Resources) -> tuple[str, str, int, int] | None:
        """(queue, resource, used, max) for the first queue that ``amount`` would push above max."""
        for p in self.ancestors(path):
            node = self.nodes[p]
            limit = node.spec.max
            if limit is None:
                continue
            after = node.used + amount
            for name, value, cap in (
                ("gpu", after.gpu, limit.gpu),
                ("cpu", after.cpu, limit.cpu),
                ("memory", after.memory, limit.memory),
            ):
                if cap > 0 and value > cap:
                    return p, name, node.used.get(name), cap
            for key, cap in limit.extended:
                if cap > 0 and after.get(key) > cap:
                    return p, key, node.used.get(key), cap
        return None

    def drf_share(self, path: str, cluster: Resources) -> float:
        """Dominant share for ordering: usage over guaranteed, or over the cluster without one."""
        node = self.nodes[path]
        base = cluster if node.spec.guaranteed.is_zero() else node.spec.guaranteed
        share, _ = node.used.dominant_share(base)
        if not node.spec.guaranteed.is_zero() and share == 0.0 and not node.used.is_zero():
            # used only resources the guarantee does not cover: fall back to the cluster
            share, _ = node.used.dominant_share(cluster)
        return share

    def compute_normalized_shares(self, cluster: Resources) -> None:
        """S: the parent's S split among its children so that siblings sum to it (root's S is 1).

        A child with a guarantee takes its guaranteed dominant share of the cluster; children
        without one split what their guaranteed siblings leave of the parent's S equally (nothing
        when the guarantees take it all). Guarantees that add up to more than the parent's S are
        scaled down to it. So the shares of any set of siblings add up to their parent's, and a
        queue with no guarantee beside siblings that hold the whole parent gets 0 (as a Slurm
        account with no shares does), not an extra slice on top of theirs.
        """
        for path in self.tree_order():
            node = self.nodes[path]
            parent = node.spec.parent
            if parent is None or parent not in self.nodes:
                node.normalized_share = 1.0
            kids = [self.nodes[c] for c in node.children]
            if not kids:
                continue
            whole = node.normalized_share
            guaranteed = {
                k.path: k.spec.guaranteed.dominant_share(cluster)[0]
                for k in kids
                if not k.spec.guaranteed.is_zero()
            }
            claimed = sum(guaranteed.values())
            scale = whole / claimed if claimed > whole else 1.0
            rest = max(whole - claimed * scale, 0.0)
            free_kids = len(kids) - len(guaranteed)
            for kid in kids:
                if kid.path in guaranteed:
                    kid.normalized_share = guaranteed[kid.path] * scale
                else:
                    kid.normalized_share = rest / free_kids

    def fairshare(self, path: str, cluster: Resources) -> tuple[float, float, float]:
        """(U, S, 2^(-U/S)) for a queue; S of 0 gives 1 when unused, else 0."""
        node = self.nodes[path]
        usage, _ = node.used.dominant_share(cluster)
        s = node.normalized_share
        if s <= 0:
            return usage, s, 1.0 if usage <= 0 else 0.0
        return usage, s, 2.0 ** (-usage / s)

    def status(self, cluster: Resources) -> dict[str, QueueStatus]:
        out: dict[str, QueueStatus] = {}
        depth: dict[str, int] = {}
        for path in self.tree_order():
            node = self.nodes[path]
            parent = node.spec.parent if node.spec.parent in self.nodes else None
            depth[path] = depth[parent] + 1 if parent is not None else 0
            base = cluster if node.spec.guaranteed.is_zero() else node.spec.guaranteed
            share, resource = node.used.dominant_share(base)
            u, s, factor = self.fairshare(path, cluster)
            borrowing = borrows(node.used, node.spec.guaranteed)
            out[path] = QueueStatus(
                path=path,
                parent=parent,
                children=tuple(node.children),
                depth=depth[path],
                state=node.spec.state,
                guaranteed=node.spec.guaranteed,
                max=node.spec.max,
                used=node.used,
                pending=node.pending,
                running_jobs=node.running_jobs,
                pending_jobs=node.pending_jobs,
                dominant_share=share,
                dominant_resource=resource,
                cluster_share=u,
                normalized_share=s,
                fairshare_factor=factor,
                borrowing=borrowing,
            )
        return out
