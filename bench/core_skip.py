"""What a refresh costs in the live console when an event changes nothing the core reads, and when it does.

``python -m bench.core_skip [pods]``: a :class:`LiveConsoleSession` holding ``pods`` pods (8 per
job, on ``pods // 8`` nodes; no reflectors, the store filled directly), then alternately one
watch event that only bumps a container's restart count (``same_inputs`` holds: the core is
skipped) and one that finishes a pod (the core runs), each followed by ``refresh()``; medians
of ``repeats`` each, interleaved. The figure is the refresh's wall time (snapshot, policy, the
comparison or the core), what the console's tick worker pays per refresh that saw events.
"""

from __future__ import annotations

import statistics
import sys
import time

import orjson

from bench.live_app import live_session
from bench.payloads import pod_updates


def run(pods: int, repeats: int = 5) -> str:
    session = live_session(pods, max(pods // 8, 1))
    skipped: list[float] = []
    ran: list[float] = []
    for k in range(repeats):
        restart = pod_updates(pods, restarts=k + 1, rv_base=2_000_000 + 2 * k * pods)
        finish = orjson.loads(pod_updates(pods, restarts=k + 1, rv_base=3_000_000 + 2 * k * pods)[k + 1])
        finish["object"]["status"]["phase"] = "Succeeded"
        session.store.apply_raw("Pod", restart[pods // 2 + k])  # a pod no finish touches
        t0 = time.perf_counter()
        session.refresh()
        t1 = time.perf_counter()
        session.store.apply_raw("Pod", orjson.dumps(finish))
        t2 = time.perf_counter()
        session.refresh()
        t3 = time.perf_counter()
        skipped.append(t1 - t0)
        ran.append(t3 - t2)
    assert session.core_runs_skipped == repeats
    return (
        f"{pods:,} pods: refresh after a restart-only event {statistics.median(skipped) * 1e3:.1f} ms"
        f" (core skipped), after a pod finished {statistics.median(ran) * 1e3:.1f} ms (core run);"
        f" medians of {repeats}"
    )


if __name__ == "__main__":
    print(run(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000))
