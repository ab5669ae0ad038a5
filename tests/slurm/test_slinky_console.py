"""The joined view: a Slinky-shaped cluster (fake API server) and the REAL slurmrestd in one console.

The Kubernetes side is ``tests/fixtures/slinky/cluster.yaml`` (a NodeSet's slurmd pods sn0..sn3 on
gpu-w0..3, a slurm-bridge pod, a plain Kubernetes Job); the Slurm side is the real slurmctld of
``tests/slurm/realslurm.py`` (sn1..sn3, gpu:2 each) with ``sleep`` jobs. What upstream semantics
make the expected result:

- a Slurm job running on Slurm node ``snN`` uses GPUs of the slurmd pod whose
  ``nodeset.slinky.slurm.net/pod-hostname`` is ``snN`` (slurm-operator: that label is the Slurm
  node name), so those GPUs of Kubernetes node ``gpu-wN`` are the Slurm job's, coloured by its account;
- a pod labelled ``scheduler.slinky.slurm.net/slurm-jobid=N`` is a member of Slurm job N
  (slurm-bridge), so the Kubernetes Job it formed is not a second row;
- states, reasons and priorities are Slurm's own (what squeue prints).

The stand-in for slurm-bridge's external job is an ordinary sbatch job (this Slurm has no
Kubernetes nodes to place one on); what is tested is the join through the label.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import kmock
import pytest

from hpctop import cli
from hpctop.actions.audit import AuditLog
from hpctop.backends.slurm.act import SlurmActions
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.runtime.slurm_console import SlurmConsoleSession
from hpctop.sources.slurm.poll import SlurmPoller
from hpctop.sources.slurm.rest import SlurmRest
from hpctop.tui.app import make_app
from hpctop.tui.gpumap import build_gpu_map
from hpctop.tui.keymap import KEYMAP
from hpctop.tui.rows import make_row
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.kube.conftest import FAST, write_kubeconfig
from tests.kube.fakeserver import ALL, FakeApiServer
from tests.polling import until
from tests.slurm.proxy import RecordingProxy
from tests.slurm.realslurm import RealSlurm, hpctop_cli
from tests.slurm.slinky import NODESETS, serve_slinky


@pytest.fixture
async def api() -> AsyncIterator[FakeApiServer]:
    async with FakeApiServer(served=(*ALL, NODESETS)) as server, kmock.Server(server):
        yield server


def _squeue(slurm: RealSlurm) -> dict[str, tuple[str, str, str, str]]:
    """squeue's own words per job id: state code, reason, account, node list."""
    out = slurm.run(["squeue", "-h", "-o", "%i|%t|%r|%a|%N"]).stdout
    rows = {}
    for line in out.splitlines():
        job_id, code, reason, account, nodes = line.split("|")
        rows[job_id] = (code, reason, account, nodes)
    return rows


async def _connect(
    api: FakeApiServer, tmp_path: Path, slurm_url: str, token: str, *, read_only: bool
) -> SlurmConsoleSession:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", str(api.url).rstrip("/"))
    live = await asyncio.to_thread(
        LiveConsoleSession.connect,
        str(kubeconfig),
        None,
        settings=FAST,
        read_only=read_only,
        audit_path=tmp_path / "audit.jsonl",
    )
    client = SlurmRest(slurm_url, user="root", token=token, read_only=read_only)
    actions = SlurmActions(client, audit=AuditLog(tmp_path / "audit.jsonl"))
    return SlurmConsoleSession(live, SlurmPoller(client, interval=0.0), actions)


async def test_slurm_and_kubernetes_jobs_in_one_view(
    slurm: RealSlurm, api: FakeApiServer, tmp_path: Path
) -> None:
    physics = slurm.sbatch("-A", "physics", "-w", "sn1", "--gres=gpu:2", "-J", "lattice")
    chem = slurm.sbatch("-A", "chem", "-w", "sn2", "--gres=gpu:1", "-J", "dft")
    bridged = slurm.sbatch("-A", "bio", "-w", "sn3", "--gres=gpu:1", "-J", "bridge-train")
    waiting = slurm.sbatch("-A", "physics", "-w", "sn1", "--gres=gpu:2", "-J", "lattice-2")
    serve_slinky(api, bridge_job=bridged)
    await until(
        lambda: _squeue(slurm).get(chem, ("",))[0] == "R" and _squeue(slurm)[waiting][1] != "None",
        timeout=30.0,
        what="the Slurm jobs to run and the waiting one to get its reason",
    )
    squeue = _squeue(slurm)
    assert squeue[physics][0] == "R" and squeue[waiting][0] == "PD"

    session = await _connect(api, tmp_path, slurm.url, slurm.token(), read_only=True)
    try:
        await until(
            lambda: session.synced and ("ml", "Job", "k8s-train") in session.inner.snapshot.jobs,
            what="the Kubernetes side",
        )
        session.refresh()
        snapshot = session.snapshot
        rows = {row.id: row for row in (make_row(job, None) for job in snapshot.jobs.values())}
        # one job, one row: the bridge pod's Kubernetes Job is the Slurm job's row, nothing twice
        assert "slurm-bridge/bridge-train" not in rows
        assert len(rows) == len(snapshot.jobs)
        assert "ml/k8s-train" in rows  # the Kubernetes job stays a Kubernetes row
        for job_id in (physics, chem, bridged, waiting):
            row = rows[f"Slurm/{job_id}"]
            code, reason, account, _ = squeue[job_id]
            assert row.st == code  # squeue's state code
            assert row.queue == account  # the account is the queue
            assert row.reason == (reason if code == "PD" else "")  # Slurm's word while it waits
        assert rows[f"Slurm/{waiting}"].reason in ("Resources", "Priority")  # not hpctop's code
        assert rows[f"Slurm/{physics}"].prio == int(
            slurm.run(["squeue", "-h", "-j", physics, "-o", "%Q"]).stdout
        )
        assert snapshot.jobs[("", "SlurmJob", bridged)].pods == (("slurm-bridge", "bridge-train-x7k2p"),)

        # the GPUs: a NodeSet's slurmd pod on gpu-wN is Slurm node snN (its pod-hostname label)
        gpus = build_gpu_map(snapshot.nodes, snapshot.pods, snapshot.pods_by_node, snapshot.jobs, [], None)
        cells = {
            n.name: [(s.holders[0][0], s.queue) if s.holders else None for s in n.slots] for n in gpus.nodes
        }
        assert cells["gpu-w1"] == [(f"Slurm/{physics}", "physics")] * 2  # sbatch -w sn1 --gres=gpu:2
        assert cells["gpu-w2"][0] == (f"Slurm/{chem}", "chem")  # one of sn2's two GPUs
        assert cells["gpu-w2"][1] is not None and cells["gpu-w2"][1][0] != f"Slurm/{chem}"  # slurmd keeps one
        assert all(
            cell is None or not cell[0].startswith("Slurm/") for cell in cells["gpu-w0"]
        )  # sn0: no Slurm job
        # Slurm's partitions join the queue pane: sinfo's partitions, squeue's counts per partition
        parts = session.slurm_partitions
        assert set(parts) == {"slurm", "slurm.gpu", "slurm.debug"}
        assert (parts["slurm.gpu"].running_jobs, parts["slurm.gpu"].pending_jobs) == (3, 1)
        assert parts["slurm.gpu"].used.gpu == 4000  # 2 + 1 + 1 GPUs held by its running jobs
        assert parts["slurm.debug"].state.value == "open" and parts["slurm.debug"].running_jobs == 0
        # k8s-a's pods name no device: the pane knows their holders per node (unplaced)
        k8s_a = {holder[:2]: holder[2] for n in gpus.nodes if n.name == "k8s-a" for holder in n.unplaced}
        assert k8s_a == {(f"Slurm/{bridged}", "bio"): 1.0, ("ml/k8s-train", ""): 2.0}
    finally:
        await asyncio.to_thread(session.close)


async def test_read_only_console_sends_slurmrestd_no_action(
    slurm: RealSlurm, api: FakeApiServer, tmp_path: Path
) -> None:
    """Every action key on a Slurm row in read-only mode: refused, and nothing mutating reaches slurmrestd."""
    pending = slurm.sbatch("-A", "physics", "--hold", "-J", "held")
    running = slurm.sbatch("-A", "chem", "-w", "sn2", "--gres=gpu:1", "-J", "dft")
    serve_slinky(api, bridge_job="0")
    with RecordingProxy(slurm.url) as proxy:
        session = await _connect(api, tmp_path, proxy.url, slurm.token(), read_only=True)
        try:
            await until(lambda: session.synced, what="the Kubernetes side")
            session.refresh()
            assert ("", "SlurmJob", pending) in session.snapshot.jobs
            app = make_app(session, tick_interval=0, show_charts=False, read_only=True)
            async with app.run_test(size=(180, 50)) as pilot:
                app.step_now(0)
                await pilot.pause()
                table = app.query_one(JobsTable)
                assert "slurm.gpu" in app.query_one(QueuePane).queues  # Slurm's partitions, drawn
                assert "Slurm" in app.export_screenshot() and f"Slurm/{pending}" in app.export_screenshot()
                action_keys = [
                    k.strip()
                    for s in KEYMAP
                    if s.name in {"cancel", "requeue", "hold", "release", "priority", "move"}
                    for k in s.keys.split(",")
                ]
                assert len(action_keys) >= 6
                for job_id in (pending, running):
                    assert table.select_key(("", "SlurmJob", job_id))
                    for key in action_keys:
                        await pilot.press(key)
                        await pilot.pause()
                        while len(app.screen_stack) > 1:
                            app.pop_screen()
                            await pilot.pause()
                    app.action_job_action("cancel")  # called directly too: nothing
                    await pilot.pause()
            # the actuator itself, asked directly: refused at the client's chokepoint
            from hpctop.actions.requests import ActionKind
            from hpctop.backends.slurm.act import slurm_job_request
            from hpctop.errors import ActionRefused

            preview = session.actuator.preview(slurm_job_request(ActionKind.CANCEL, running))
            assert not preview.allowed and "read-only" in (preview.refusal or "")
            with pytest.raises(ActionRefused):
                session.actuator.execute(slurm_job_request(ActionKind.CANCEL, running))
        finally:
            await asyncio.to_thread(session.close)
        assert proxy.seen  # the console did read slurmrestd through the proxy
        assert proxy.mutating() == []
    assert _squeue(slurm)[running][0] == "R"  # and Slurm still runs it


async def test_a_refused_token_degrades_only_the_slurm_rows(
    slurm: RealSlurm, api: FakeApiServer, tmp_path: Path
) -> None:
    job = slurm.sbatch("-A", "physics", "-w", "sn1", "-J", "x")
    serve_slinky(api, bridge_job="0")
    session = await _connect(api, tmp_path, slurm.url, slurm.token(), read_only=True)
    try:
        await until(
            lambda: session.synced and ("ml", "Job", "k8s-train") in session.snapshot.jobs, what="sync"
        )
        session.refresh()
        assert ("", "SlurmJob", job) in session.snapshot.jobs and session.slurm_note == ""
        session.poller.client.token = "not-a-token"
        session.refresh()
        note = session.slurm_note
        # 22.05's slurmrestd answers a bad token with a 500 ("Failed while looking for jobs"),
        # newer ones with 401 ("refuses the token"): either way the Slurm rows are marked stale
        assert note.startswith("Slurm rows stale") and "slurmrestd" in note, note
        jobs = session.snapshot.jobs
        assert ("", "SlurmJob", job) in jobs  # the last good rows are kept, marked stale
        assert ("ml", "Job", "k8s-train") in jobs
        assert not str(session.connection).startswith("stale")  # the Kubernetes side is not stale
        assert note in session.snapshot.notes
        app = make_app(session, tick_interval=0, show_charts=False, read_only=True)
        async with app.run_test(size=(200, 40)) as pilot:
            app.step_now(0)
            await pilot.pause()
            bar = str(app.query_one("#status").render())
            assert "Slurm rows stale" in bar, bar  # the status bar says it, in one line
        session.poller.client.url = "http://127.0.0.1:9"  # now slurmrestd is down altogether
        session.refresh()
        assert "Slurm rows stale" in session.slurm_note and ("", "SlurmJob", job) in session.snapshot.jobs
    finally:
        await asyncio.to_thread(session.close)


async def test_jobs_table_joins_the_two_sides_too(
    slurm: RealSlurm, api: FakeApiServer, tmp_path: Path
) -> None:
    """``hpctop jobs --kubeconfig ... --slurm-url ...``: the same joined rows, no job twice."""
    bridged = slurm.sbatch("-A", "bio", "-w", "sn3", "--gres=gpu:1", "-J", "bridge-train")
    other = slurm.sbatch("-A", "chem", "-w", "sn2", "-J", "dft")
    serve_slinky(api, bridge_job=bridged)
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", str(api.url).rstrip("/"))
    done = await asyncio.to_thread(
        hpctop_cli, slurm, "jobs", "-o", "json", "--kubeconfig", str(kubeconfig), token=slurm.token()
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    assert "slurm-bridge/bridge-train" not in ids  # its pod is Slurm job `bridged`'s
    by_id = {row["id"]: row for row in rows}
    assert by_id[bridged]["backend"] == "slurm" and by_id[bridged]["account"] == "bio"
    assert by_id[other]["backend"] == "slurm"
    assert "ml/k8s-train" in ids  # the Kubernetes job is still listed


def _captured_console(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    """Replace the console's app with one that keeps the session it was given and exits."""
    made: list[tuple[Any, dict[str, Any]]] = []

    class App:
        return_code = 0
        theme = "hpctop-dark"

        def run(self, **options: Any) -> None:
            return None

    def make_app(session: Any, **kwargs: Any) -> App:
        made.append((session, kwargs))
        return App()

    monkeypatch.setattr(cli, "_load_make_app", lambda: make_app)
    return made


def test_console_beside_the_demo_reads_the_real_slurmrestd(
    slurm: RealSlurm, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``hpctop --demo --slurm-url URL --read-only``: the demo's rows and Slurm's, read-only at the client."""
    job = slurm.sbatch("-A", "physics", "-w", "sn1", "-J", "x")
    made = _captured_console(monkeypatch)
    monkeypatch.setenv("SLURM_JWT", slurm.token())
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    code = cli.main(
        ["--demo", "--read-only", "--slurm-url", slurm.url, "--slurm-user", "root", "--slurm-poll", "3"]
    )
    assert code == 0 and len(made) == 1
    session, options = made[0]
    assert isinstance(session, SlurmConsoleSession) and options["read_only"] is True
    assert session.poller.client.read_only and session.poller.interval == 3.0
    jobs = session.snapshot.jobs
    assert ("", "SlurmJob", job) in jobs
    assert any(key[1] != "SlurmJob" for key in jobs)  # the demo's own jobs are still there
