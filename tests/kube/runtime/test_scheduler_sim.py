"""The issue's check: ``hpctop schedule`` schedules a simulated cluster served over HTTP, and its
decisions are the ones ``hpctop jobs --scenario`` predicts for the same scenario.

Set-up: the simulated cluster runs *without* its own binder (:class:`UnboundSession` never
schedules) and is served by a fake API server whose Binding subresource is wired back into the
simulation (:class:`BindingFake`): a bind over HTTP is a ``SimulatedCluster.bind``, so the pod
starts running on the simulated node and, later, ends, exactly as if the embedded scheduler had
bound it. The only binder is :class:`~hpctop.runtime.scheduler.HeadlessScheduler`, reading the
server through its reflectors and binding through ``bind_gang``.

Both runs take their decisions at the same virtual instants (every 10 s from t=0, the embedded
session's cycle), so the comparison is exact: per job, state, nodes, run time and reason at
several checkpoints, which covers the queue order (who starts first), backfill (a small job
starting ahead of a reserved gang) and the gang starting together.

The scenario has no partitions or queues of its own, so the policy a live cluster yields (the
default one) is the scenario's: nothing differs but the path the decisions travel.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import kmock
import pytest
from kmock._internal import rendering

from hpctop.cli import main
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot
from hpctop.runtime.scheduler import HeadlessScheduler, SchedulerOptions
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator.cluster import EPOCH, SimulatedCluster, SimulatorError
from hpctop.tables import jobs as jobs_table
from tests.kube.conftest import FAST, write_kubeconfig
from tests.kube.fakeserver import JOBS, NODES, PODS, PRIORITY_CLASSES, FakeApiServer, Res
from tests.kube.simserver import ServedSession

SCENARIO = """
[[nodes]]
name = "dgx"
count = 4
gpus = 8
gpu_model = "H100"
cpu = "64"
memory = "512Gi"

[[jobs]]
name = "big"
submit = 0
duration = 100
time_limit = 120
members = 2
per_member = { gpu = 8, cpu = "8", memory = "8Gi" }
priority = 100

[[jobs]]
name = "gang"
submit = 5
duration = 100
time_limit = 120
members = 4
per_member = { gpu = 8, cpu = "8", memory = "8Gi" }
priority = 100

[[jobs]]
name = "small"
submit = 12
duration = 40
time_limit = 50
per_member = { gpu = 8, cpu = "8", memory = "8Gi" }
priority = 1

[[jobs]]
name = "late"
submit = 20
duration = 300
time_limit = 400
per_member = { gpu = 8, cpu = "8", memory = "8Gi" }
priority = 1
"""
INTERVAL = 10  # the embedded session's scheduling cycle (runtime.session.DEFAULT_INTERVAL)
CHECKPOINTS = (30, 130, 260)


@attrs.define(kw_only=True)
class BindingFake(FakeApiServer):
    """A fake API server whose successful Bindings are also made in the simulated cluster."""

    on_bind: Callable[[str, str, str], None] | None = None

    def _bind(self, request: rendering.Request, body: Any, dry_run: bool) -> tuple[int, Any, dict[str, str]]:
        answer = super()._bind(request, body, dry_run)
        target = (body.get("target") or {}).get("name") if isinstance(body, dict) else None
        if not dry_run and self.on_bind is not None and target:
            self.on_bind(request.namespace or "", request.name or "", str(target))
        return answer


class UnboundSession(ServedSession):
    """The simulated cluster served over HTTP, with no scheduler of its own: pods wait for a binder."""

    def __init__(self, fake: BindingFake, scenario_text: str) -> None:
        scenario = parse_scenario(scenario_text, name="sched")
        super().__init__(fake, SimulatedCluster(scenario, seed=1), scenario.policy, "unbound")
        self.refused: list[str] = []
        fake.on_bind = self.bound

    def _cycle(self, at: float) -> None:
        return  # the external scheduler binds

    def bound(self, namespace: str, name: str, node: str) -> None:
        """The kubelet's side of a Binding: the simulated pod starts on ``node`` now."""
        try:
            self._apply(self.cluster.bind((namespace, name), node))
        except SimulatorError as exc:
            self.refused.append(exc.detail)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[UnboundSession, Path]]:
    async with BindingFake() as fake, kmock.Server(fake):
        session = UnboundSession(fake, SCENARIO)
        yield session, write_kubeconfig(tmp_path / "config", str(fake.url).rstrip("/"))


def last_rv(fake: FakeApiServer, res: Res) -> int:
    return max((rv for rv, r, _ in fake.history if r == res), default=0)


async def caught_up(scheduler: HeadlessScheduler, fake: FakeApiServer) -> None:
    """Wait until the scheduler's store has seen every change the server made."""
    kinds = {"Pod": PODS, "Node": NODES, "Job": JOBS, "PriorityClass": PRIORITY_CLASSES}
    for _ in range(500):
        seen = scheduler.store.resource_versions
        if all(int(seen.get(kind) or 0) >= last_rv(fake, res) for kind, res in kinds.items()):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the scheduler's watches did not catch up with the server")


def rows(snapshot: Snapshot, scheduler: HeadlessScheduler, at: float) -> dict[str, tuple[object, ...]]:
    """name → (state, nodes, run time, reason): what both runs must agree on at a checkpoint."""
    from hpctop.model.backends.queues import policy_from_snapshot
    from hpctop.scheduling.core import schedule

    result = schedule(snapshot, policy_from_snapshot(snapshot, scheduler.base_policy), at)
    out = jobs_table.job_rows(snapshot, result, states=None, include_finished=True)
    return {r["name"]: _project(r) for r in out}


def _project(row: dict[str, Any]) -> tuple[object, ...]:
    return (row["state"], tuple(row["nodes"]), row["elapsed"], row["reason"])


def predicted(scenario: Path, at: int, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[object, ...]]:
    code = main(["jobs", "--scenario", str(scenario), "--at", str(at), "--all", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return {r["name"]: _project(r) for r in json.loads(out.out)}


async def test_schedule_runs_the_simulated_cluster_as_jobs_predicts(
    served: tuple[UnboundSession, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session, kubeconfig = served
    fake = session.fake
    assert isinstance(fake, BindingFake)
    assert session.policy == Policy()  # the premise: a live cluster's default policy is the scenario's
    scenario = tmp_path / "sched.toml"
    scenario.write_text(SCENARIO)
    expected = {at: predicted(scenario, at, capsys) for at in CHECKPOINTS}
    assert expected[30]["small"][0] == "RUNNING" and expected[30]["gang"][0] == "PENDING"  # backfilled

    connection = await load_connection(str(kubeconfig))
    lines: list[str] = []
    got: dict[int, dict[str, tuple[object, ...]]] = {}
    gang_binds: list[list[str]] = []
    options = SchedulerOptions(lease_namespace="kube-system", identity="sim")
    async with HeadlessScheduler(
        connection, options, settings=FAST, clock=lambda: session.now, log=lines.append
    ) as scheduler:
        assert scheduler.elector is not None
        await scheduler.wait_synced(5)
        for t in range(0, max(CHECKPOINTS) + 1, INTERVAL):
            session.advance_to_elapsed(t)  # arrivals and completions up to t, pushed to the server
            await caught_up(scheduler, fake)
            assert await scheduler.elector.try_acquire_or_renew()
            report = await scheduler.cycle(EPOCH + t)
            assert report.ran, report.note
            gang_binds += [[p[1] for p, _ in d.pods] for d in report.of("bound") if d.job[2] == "gang"]
            await caught_up(scheduler, fake)
            if t in CHECKPOINTS:
                got[t] = rows(scheduler.store.snapshot(), scheduler, EPOCH + t)
    fake.disconnect()

    assert session.refused == []  # every bind hpctop sent, the simulated kubelet accepted
    assert got == expected
    # the gang's four pods were bound in one cycle, one after the other, and started together
    assert len(gang_binds) == 1 and len(gang_binds[0]) == 4
    writes = [r.url.path.split("/")[-2] for r in fake.writes() if r.url.path.endswith("/binding")]
    start = writes.index(gang_binds[0][0])
    assert writes[start : start + 4] == gang_binds[0]
    gang_pods = [p for p in session.store.snapshot().pods.values() if p.name.startswith("gang-")]
    assert len(gang_pods) == 4 and len({p.started for p in gang_pods}) == 1
    order = [line.split()[2] for line in lines if line.startswith("bound ")]
    assert order == ["default/big", "default/small", "default/gang", "default/late"]  # small backfilled
