"""Issue 12: a live API server's error text reaches stderr sanitised (OSC 52 / OSC 0 in a Status).

A 500 answer whose ``Status.message`` carries a clipboard write and a title change, and a 403
note naming a planted reason, go through the real kubeconfig loading and real HTTP to the fake
API server; what the shell prints must hold neither ESC nor BEL (fails on 1a556ef: raw).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import kmock
import pytest

from hpctop.cli import main
from tests.kube.fakeserver import JOBS, NODES, PODS, FakeApiServer
from tests.model_fixtures import node, pod

HOSTILE = "boom\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x1b\\\x9b31m\u202e"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f]")


async def test_a_500_status_with_osc_sequences_comes_out_harmless(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.upsert(NODES, node("dgx-0", gpus=8))
    fake.fail(PODS, kmock.action.LIST, 500, times=50, reason=HOSTILE)
    code = await asyncio.to_thread(main, ["jobs", "--kubeconfig", str(kubeconfig)])
    out = capsys.readouterr()
    assert code != 0
    assert out.err.strip(), "the failure is reported"
    assert RAW.search(out.err) is None, repr(out.err)
    assert "␛]52" in out.err or "boom" in out.err  # the message is shown, defused


async def test_a_note_from_the_server_is_sanitised(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.upsert(NODES, node("dgx-0", gpus=8))
    fake.upsert(PODS, pod("train\u202e-0", node="dgx-0", phase="Running", gpus=8))
    fake.fail(JOBS, kmock.action.LIST, 403, times=10, reason=HOSTILE)
    code = await asyncio.to_thread(main, ["jobs", "--kubeconfig", str(kubeconfig)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "note: Job" in out.err
    assert RAW.search(out.err) is None, repr(out.err)
    assert RAW.search(out.out) is None, repr(out.out)
    assert "train<U+202E>-0" in out.out
