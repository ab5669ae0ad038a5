"""Absurd quantities from a live cluster: every table answers, the bad object is noted (issue 12).

Over real HTTP from the fake API server: a node advertising ``1E18`` GPUs made ``jobs``,
``nodes``, ``gpus``, ``queues`` and ``prio`` die with MemoryError, ``9223372036854775808`` with
OverflowError; GPU requests of ``1e400``, ``NaN``, ``-8``, ``inf`` gave negative GPU counts or
vanished without a note. Each value must be refused for its one object, with a note on stderr
naming it, while the other objects are shown.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from hpctop.cli import main
from tests.kube.fakeserver import NODES, PODS, VCJOBS, FakeApiServer
from tests.model_fixtures import node, pod

VALUES = ["1E18", "9223372036854775808", "1e400", "NaN", "-8", "inf"]
COMMANDS = ["jobs", "nodes", "gpus", "queues", "prio"]


def _seed(fake: FakeApiServer, value: str) -> None:
    fake.upsert(NODES, node("good-node", gpus=8))
    bad_node = node("bad-node", gpus=8)
    bad_node["status"]["allocatable"]["nvidia.com/gpu"] = value
    bad_node["status"]["capacity"]["nvidia.com/gpu"] = value
    fake.upsert(NODES, bad_node)
    fake.upsert(PODS, pod("good-pod", node="good-node", phase="Running", gpus=2))
    bad_pod = pod("bad-pod")
    bad_pod["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": value}
    fake.upsert(PODS, bad_pod)


@pytest.mark.parametrize("value", VALUES)
async def test_every_table_survives_an_absurd_gpu_quantity(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    _seed(fake, value)
    for command in COMMANDS:
        code = await asyncio.to_thread(main, [command, "--kubeconfig", str(kubeconfig), "-o", "json"])
        out = capsys.readouterr()
        assert code == 0, (command, out.err)
        assert "Node bad-node: status." in out.err, (command, out.err)
        assert "Pod team-a/bad-pod: spec.containers" in out.err, (command, out.err)
        rows = json.loads(out.out)
        text = json.dumps(rows)
        assert "bad-pod" not in text and "bad-node" not in text
        if command == "jobs":
            assert [r["name"] for r in rows] == ["good-pod"]
        if command == "gpus":
            assert sum(r["total"] for r in rows) == 8 and sum(r["allocated"] for r in rows) == 2
            assert all(0 <= r["allocated"] <= r["total"] for r in rows)


async def test_a_volcano_job_without_condition_types_is_listed(fake: FakeApiServer, kubeconfig: Path) -> None:
    """The vcjob is read over real HTTP (a list page without apiVersion/kind) and kept whole.

    (The fake server's discovery lists no CRD groups, so the resources are named here.)
    """
    from hpctop.runtime.live import list_once
    from hpctop.sources.kube.resources import DEFAULT_RESOURCES, VOLCANO_JOBS
    from tests.model.test_decode_tolerant import VOLCANO_JOB

    fake.upsert(NODES, node("good-node", gpus=8))
    fake.upsert(VCJOBS, VOLCANO_JOB)
    notes: list[str] = []
    store = await list_once(
        str(kubeconfig), None, None, resources=(*DEFAULT_RESOURCES, VOLCANO_JOBS), notes=notes
    )
    key = ("team-a", "Job.batch.volcano.sh", "vcjob")
    assert key in store.workloads and not store.skipped and not notes
    assert store.workloads[key].api_version == "batch.volcano.sh/v1alpha1"
    assert key in store.snapshot().jobs
