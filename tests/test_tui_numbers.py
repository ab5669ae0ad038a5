"""Numbers the console shows must mean what they say (issue 15, "honest numbers").

Each test here failed on the code before the fix it guards: the borrowing marker lit by CPU use
under a GPU-only guarantee, fair shares of siblings adding up to more than their parent's, the
status bar counting free GPUs where every pane counts used ones, and so on.
"""

from __future__ import annotations

import math

from hpctop.model.policy import Policy, QueueSpec
from hpctop.model.resources import Resources
from hpctop.scheduling.queues import QueueTree, borrows

CLUSTER = Resources.of(cpu=64_000, memory=512 * 2**30, gpu=16_000)


def _tree(*specs: QueueSpec) -> QueueTree:
    tree = QueueTree(Policy(queues=specs, default_queue="root.default"))
    tree.compute_normalized_shares(CLUSTER)
    return tree


def test_cpu_use_under_a_gpu_only_guarantee_is_not_borrowing() -> None:
    gpu_only = Resources.of(gpu=4000)
    assert not borrows(Resources.of(cpu=8000, memory=2**34, gpu=2000), gpu_only)
    assert borrows(Resources.of(cpu=8000, gpu=5000), gpu_only)
    tree = _tree(QueueSpec("root.a", guaranteed=gpu_only))
    tree.add_used("root.a", Resources.of(cpu=8000, memory=2**34, gpu=2000))
    status = tree.status(CLUSTER)
    assert not status["root.a"].borrowing
    # root has no guarantee: its use borrows nobody's
    assert not status["root"].borrowing
    tree.add_used("root.a", Resources.of(gpu=3000))
    assert tree.status(CLUSTER)["root.a"].borrowing


def test_sibling_shares_sum_to_the_parent_share() -> None:
    # a, b hold 12 of 16 GPUs; c and the default queue have no guarantee: they split the other 4
    tree = _tree(
        QueueSpec("root.a", guaranteed=Resources.of(gpu=8000)),
        QueueSpec("root.b", guaranteed=Resources.of(gpu=4000)),
        QueueSpec("root.c"),
        QueueSpec("root.a.x", guaranteed=Resources.of(gpu=2000)),
        QueueSpec("root.a.y"),
    )
    status = tree.status(CLUSTER)
    top = [p for p in status if status[p].parent == "root"]
    assert sorted(top) == ["root.a", "root.b", "root.c", "root.default"]
    assert math.isclose(sum(status[p].normalized_share for p in top), 1.0)
    assert math.isclose(status["root.c"].normalized_share, 0.125)
    assert math.isclose(status["root.default"].normalized_share, 0.125)
    kids = [status["root.a.x"].normalized_share, status["root.a.y"].normalized_share]
    assert math.isclose(sum(kids), status["root.a"].normalized_share)
    assert math.isclose(kids[1], 0.5 - 0.125)


def test_a_queue_without_guarantee_gets_nothing_when_siblings_hold_everything() -> None:
    tree = _tree(
        QueueSpec("root.a", guaranteed=Resources.of(gpu=10_000)),
        QueueSpec("root.b", guaranteed=Resources.of(gpu=6000)),
    )
    status = tree.status(CLUSTER)
    assert status["root.default"].normalized_share == 0.0
    assert math.isclose(status["root.a"].normalized_share + status["root.b"].normalized_share, 1.0)


def test_guarantees_above_the_parent_are_scaled_to_it() -> None:
    tree = _tree(
        QueueSpec("root.a", guaranteed=Resources.of(gpu=4000)),
        QueueSpec("root.a.x", guaranteed=Resources.of(gpu=4000)),
        QueueSpec("root.a.y", guaranteed=Resources.of(gpu=4000)),
    )
    status = tree.status(CLUSTER)
    assert math.isclose(status["root.a.x"].normalized_share + status["root.a.y"].normalized_share, 0.25)
