"""The simulated cluster served over HTTP: hpctop's demo session behind a FakeApiServer.

Why: an end-to-end test of the live path (kubeconfig → HTTP → watch → decode → store → core →
console) needs a cluster that looks real and is big enough to matter, and a way to know what the
answer should be. The demo session is both: it runs the simulated cluster with hpctop's core as
its binder, so pods start, run and end; every event it applies to its own store is also pushed
into the fake API server (``upsert``/``remove``), so a live hpctop reading the server must end up
with the same pods, nodes and jobs as the session's store. The session is the oracle.

The fake stamps its own resourceVersions (the simulator's are not the server's), and it keeps
only ``window`` events of history; both are what a real server does too.

By hand (a live cluster for trying the console without one)::

    python -m tests.kube.simserver --port 8080 --kubeconfig /tmp/sim.kubeconfig [--seed 1]
        [--at 300] [--speed 60] [--scenario FILE]
    hpctop --kubeconfig /tmp/sim.kubeconfig

It serves plain HTTP on 127.0.0.1 with a dummy token and advances the simulation ``speed``
virtual seconds per real second until interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import kmock
import orjson

from hpctop.model.policy import Policy
from hpctop.runtime.session import Session
from hpctop.sources.scenario import Scenario
from hpctop.sources.simulator.cluster import Event, SimulatedCluster
from tests.kube.fakeserver import DEPLOYMENTS, JOBS, NODES, PODS, PRIORITY_CLASSES, FakeApiServer, Res

RESOURCES: dict[str, Res] = {
    "Pod": PODS,
    "Node": NODES,
    "Job": JOBS,
    "Deployment": DEPLOYMENTS,
    "PriorityClass": PRIORITY_CLASSES,
}


def push(fake: FakeApiServer, events: list[Event]) -> int:
    """Apply simulator events to the fake server; returns how many were pushed."""
    pushed = 0
    for kind, raw in events:
        res = RESOURCES.get(kind)
        if res is None:
            continue
        event: dict[str, Any] = orjson.loads(raw)
        obj = event["object"]
        if event["type"] == "DELETED":
            meta = obj["metadata"]
            fake.remove(res, meta["name"], meta.get("namespace"))
        else:
            obj["metadata"].pop("resourceVersion", None)  # the server stamps its own
            fake.upsert(res, obj)
        pushed += 1
    return pushed


class ServedSession(Session):
    """A simulated session that forwards every event it applies to a FakeApiServer."""

    def __init__(
        self, fake: FakeApiServer, cluster: SimulatedCluster, policy: Policy, source_name: str
    ) -> None:
        self.fake = fake  # set before the base class applies the initial events
        self.pushed = 0
        super().__init__(cluster, policy, source_name)

    def _apply(self, events: list[Event]) -> None:
        super()._apply(events)
        self.pushed += push(self.fake, events)


def serve(fake: FakeApiServer, scenario: Scenario, *, seed: int = 1, at: float = 0.0) -> ServedSession:
    """Start ``scenario`` in ``fake`` and advance it to ``at`` virtual seconds."""
    session = ServedSession(fake, SimulatedCluster(scenario, seed=seed), scenario.policy, "simserver")
    if at > 0:
        session.advance_to_elapsed(at)
    return session


def demo(fake: FakeApiServer, *, seed: int = 1, at: float = 0.0) -> ServedSession:
    """The demo cluster (openb trace, 1,523 nodes) in ``fake``."""
    from hpctop.sources.simulator.trace import openb_scenario

    return serve(fake, openb_scenario(seed), seed=seed, at=at)


async def _main(args: argparse.Namespace) -> None:
    from hpctop.sources.scenario import load_scenario
    from tests.kube.conftest import write_kubeconfig

    async with FakeApiServer() as fake, kmock.Server(fake, port=args.port) as server:
        if args.scenario:
            session = serve(fake, load_scenario(Path(args.scenario)), seed=args.seed, at=args.at)
        else:
            session = demo(fake, seed=args.seed, at=args.at)
        url = str(server.url).rstrip("/")
        write_kubeconfig(Path(args.kubeconfig), url, token="simserver")
        print(
            f"serving {len(fake.items_of(NODES))} nodes at {url}; kubeconfig: {args.kubeconfig}", flush=True
        )
        last = time.monotonic()
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            session.step(args.speed * (now - last))
            last = now


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve hpctop's simulated cluster as a fake API server")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--kubeconfig", default="sim.kubeconfig", help="kubeconfig file to write")
    parser.add_argument("--scenario", help="a scenario TOML file (default: the demo)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--at", type=float, default=0.0, help="virtual seconds to advance first")
    parser.add_argument("--speed", type=float, default=60.0, help="virtual seconds per real second")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
