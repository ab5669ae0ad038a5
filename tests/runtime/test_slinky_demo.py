"""``hpctop --demo-slinky``: the recorded Slinky cluster and slurmrestd, joined offline.

The recording (``hpctop/runtime/slinky_demo.json``) holds what the real slurmrestd of
tests/slurm/realslurm.py answered (tests/slurm/record_slinky_demo.py); the expected rows are what
squeue printed for those jobs then: 1-3 running with gpu:2/1/1 on sn1/sn2/sn3, 4 waiting on
``Resources``, 5 behind it on ``Priority`` (Slurm's first-blocked-job rule), 6 held (``JobHeldUser``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hpctop import cli
from hpctop.actions.requests import ActionKind
from hpctop.backends.slurm.act import slurm_job_request
from hpctop.runtime.slinky_demo import slinky_demo_session
from hpctop.tui.app import make_app
from hpctop.tui.gpumap import build_gpu_map
from hpctop.tui.keymap import KEYMAP
from hpctop.tui.rows import make_row
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane


def test_the_demo_joins_both_sides() -> None:
    session = slinky_demo_session()
    snapshot = session.snapshot
    rows = {row.id: row for row in (make_row(job, None) for job in snapshot.jobs.values())}
    slurm = {i: rows[f"Slurm/{i}"] for i in range(1, 7)}
    assert [slurm[i].st for i in range(1, 7)] == ["R", "R", "R", "PD", "PD", "PD"]
    assert [slurm[i].reason for i in (4, 5, 6)] == ["Resources", "Priority", "JobHeldUser"]
    assert [slurm[i].queue for i in range(1, 7)] == ["physics", "chem", "bio", "physics", "chem", "bio"]
    assert "slurm-bridge/bridge-train" not in rows and "ml/k8s-train" in rows
    gpus = build_gpu_map(snapshot.nodes, snapshot.pods, snapshot.pods_by_node, snapshot.jobs, [], None)
    cells = {n.name: [s.holders[0][:2] if s.holders else None for s in n.slots] for n in gpus.nodes}
    assert cells["gpu-w1"] == [("Slurm/1", "physics")] * 2  # gres_detail gpu:2(IDX:0-1) on sn1
    assert cells["gpu-w2"][0] == ("Slurm/2", "chem")  # gpu:1(IDX:0) on sn2
    assert set(session.slurm_partitions) == {"slurm", "slurm.gpu", "slurm.debug"}
    preview = session.actuator.preview(slurm_job_request(ActionKind.CANCEL, "1"))
    assert not preview.allowed and "read-only" in (preview.refusal or "")


async def test_every_action_key_on_a_demo_slurm_row_sends_nothing() -> None:
    session = slinky_demo_session()
    sent: list[str] = []
    opener = session.poller.client._open

    def recording(request: Any, timeout: float = 0.0) -> Any:
        sent.append(request.get_method())
        return opener(request, timeout=timeout)

    session.poller.client._open = recording
    app = make_app(session, tick_interval=0, show_charts=False, read_only=True)
    async with app.run_test(size=(160, 48)) as pilot:
        app.step_now(0)
        await pilot.pause()
        assert app.query_one(JobsTable).select_key(("", "SlurmJob", "4"))
        keys = [
            k.strip()
            for s in KEYMAP
            if s.name in {"cancel", "requeue", "hold", "release", "priority", "move"}
            for k in s.keys.split(",")
        ]
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            while len(app.screen_stack) > 1:
                app.pop_screen()
                await pilot.pause()
    assert set(sent) <= {"GET"}


def test_the_cli_starts_the_demo_read_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
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
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert cli.main(["--demo-slinky"]) == 0
    session, options = made[0]
    assert options["read_only"] is True and ("", "SlurmJob", "1") in session.snapshot.jobs
    assert cli.main(["--demo-slinky", "--demo"]) == 2  # it brings its own cluster
    assert cli.main(["--demo-slinky", "--slurm-url", "http://127.0.0.1:9"]) == 2


async def test_a_double_click_on_a_slurm_partition_shows_its_jobs() -> None:
    app = make_app(slinky_demo_session(), tick_interval=0, show_charts=False, read_only=True)
    async with app.run_test(size=(160, 48)) as pilot:
        app.step_now(0)
        await pilot.pause()
        app.post_message(QueuePane.FilterJobs("slurm.gpu"))
        await pilot.pause()
        table = app.query_one(JobsTable)
        assert table.filters.partition == "gpu"
        shown = [row.id for row in table.view]
        assert shown and all(row_id.startswith("Slurm/") for row_id in shown)
