"""Which queue rows ``x``/``o`` act on, and what the console says for the rest.

Only a Kueue ClusterQueue or LocalQueue has a ``spec.stopPolicy`` hpctop sets; every other row
(a Kueue cohort, a Volcano or YuniKorn queue, the simulator's own queues) is refused with how that
queue is closed instead, so the key never does something half-right.
"""

from __future__ import annotations

import dataclasses

from hpctop.model.objects import QueueInfo
from tests.tui.test_tui import new_app


def info(path: str, kind: str, backend: str) -> QueueInfo:
    return QueueInfo(
        path, path.rsplit(".", 1)[-1].split("/")[-1], path.rsplit(".", 1)[0], kind, backend, "Open"
    )


def test_kueue_rows_resolve_and_others_say_how_they_close() -> None:
    app, _ = new_app()
    rows = [
        info("root.gpu", "cluster", "kueue"),
        info("root.gpu.team-a/lq", "local", "kueue"),
        info("root.pool", "cohort", "kueue"),
        info("root.vq", "leaf", "volcano"),
        info("root.yk", "leaf", "yunikorn"),
    ]
    app.snapshot = dataclasses.replace(app.snapshot, queues={r.path: r for r in rows})
    assert app.queue_target("root.gpu") == ("ClusterQueue", "gpu", "")
    assert app.queue_target("root.gpu.team-a/lq") == ("LocalQueue", "lq", "team-a")
    cohort, volcano, yunikorn = (app.queue_target(p) for p in ("root.pool", "root.vq", "root.yk"))
    assert isinstance(cohort, str) and "a Kueue cohort has no stopPolicy: close its ClusterQueues" in cohort
    assert isinstance(volcano, str) and "CloseQueue bus Command, which hpctop does not send yet" in volcano
    assert isinstance(yunikorn, str) and "yunikorn-configs ConfigMap drains); e changes" in yunikorn
    simulated = app.queue_target("root.prod")
    assert isinstance(simulated, str) and "one of the simulated cluster's queues" in simulated
