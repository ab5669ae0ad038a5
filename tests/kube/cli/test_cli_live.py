"""The shell tables read a live cluster: kubeconfig → real HTTP → decode → store → core → table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import kmock
import pytest

from hpctop.cli import main
from tests.kube.fakeserver import JOBS, NODES, PODS, FakeApiServer
from tests.model_fixtures import node, pod


def _seed(fake: FakeApiServer) -> None:
    fake.upsert(NODES, node("dgx-0", gpus=8))
    fake.upsert(NODES, node("dgx-1", gpus=8))
    queue_a = {"yunikorn.apache.org/queue": "root.a"}
    fake.upsert(PODS, pod("train-0", node="dgx-0", phase="Running", gpus=8, labels=queue_a))
    fake.upsert(PODS, pod("big", gpus=16, labels=queue_a))
    fake.upsert(PODS, pod("small", gpus=4, labels={"yunikorn.apache.org/queue": "root.b"}))


async def test_jobs_and_gpus_from_a_live_cluster(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(fake)
    code = await asyncio.to_thread(main, ["jobs", "--kubeconfig", str(kubeconfig), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    jobs = {j["name"]: j for j in json.loads(out.out)}
    assert jobs["train-0"]["state"] == "RUNNING"
    assert jobs["train-0"]["nodes"] == ["dgx-0"]
    # 16 GPUs on one pod can never fit an 8-GPU node: the core says so, as for the demo
    assert jobs["big"]["state"] == "PENDING"
    assert jobs["big"]["reason"] == "Constraints"
    # 4 GPUs fit the idle node: the core would place it now
    assert jobs["small"]["queue"] == "root.b"

    code = await asyncio.to_thread(main, ["gpus", "--kubeconfig", str(kubeconfig), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    rows = json.loads(out.out)
    assert sum(r["total"] for r in rows) == 16
    assert sum(r["allocated"] for r in rows) == 8


async def test_forbidden_resource_is_a_note_not_a_failure(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(fake)
    fake.fail(JOBS, kmock.action.LIST, 403, times=10)
    code = await asyncio.to_thread(main, ["jobs", "--kubeconfig", str(kubeconfig)])
    out = capsys.readouterr()
    assert code == 0
    assert "train-0" in out.out
    assert "note: Job" in out.err


async def test_unreachable_server_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.kube.conftest import write_kubeconfig

    config = write_kubeconfig(tmp_path / "config", "http://127.0.0.1:9")
    code = await asyncio.to_thread(main, ["jobs", "--kubeconfig", str(config)])
    err = capsys.readouterr().err
    assert code != 0
    assert err.count("\n") == 1
    assert "unreachable" in err.lower()
