"""The synchronous Actuator adapter: the protocol the console and the simulator share.

:class:`KubeActuator` runs the async core on its own loop thread. Here it is called the way the
console would call it from a worker thread (``asyncio.to_thread``), while the fake API server is
served by the test's loop; and it must refuse to be called from the loop it runs on (which would
deadlock). No looptime: two real loops in two threads.
"""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from hpctop.actions.actuator import KubeActuator
from hpctop.actions.kube import KubeActions
from hpctop.actions.requests import ActionKind, ActionRequest, Actuator, ReadOnlyActuator, bulk
from hpctop.errors import ActionRefused
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import JOBS, FakeApiServer
from tests.model_fixtures import batch_job

TRAIN = ("team-a", "Job", "train")


async def test_sync_adapter_previews_and_executes_from_a_thread(
    fake: FakeApiServer, connection: Connection
) -> None:
    fake.upsert(JOBS, batch_job("train"))
    actuator: Actuator = KubeActuator(KubeActions(KubeClient(connection, read_only=False)), timeout=20)
    assert isinstance(actuator, KubeActuator) and not actuator.read_only
    try:
        request = ActionRequest(ActionKind.HOLD, TRAIN, job_uid="uid-train")
        preview = await asyncio.to_thread(actuator.preview, request)
        assert preview.allowed
        result = await asyncio.to_thread(actuator.execute, request)
        assert result.ok and fake.get(JOBS, "train", "team-a")["spec"]["suspend"] is True  # type: ignore[index]
        results = await asyncio.to_thread(
            bulk,
            actuator,
            [ActionRequest(ActionKind.HOLD, TRAIN), ActionRequest(ActionKind.PRIORITY, TRAIN, value=1)],
        )
        assert [r.ok for r in results] == [False, False]
        permissions = await asyncio.to_thread(actuator.permissions, "team-a", "Job")
        assert permissions[ActionKind.CANCEL].allowed is True
    finally:
        await asyncio.to_thread(actuator.close)


async def test_sync_adapter_refuses_its_own_loop(connection: Connection) -> None:
    loop = asyncio.get_running_loop()
    actuator = KubeActuator(KubeActions(KubeClient(connection, read_only=False)), loop=loop)
    with pytest.raises(RuntimeError, match="own event loop"):
        actuator.preview(ActionRequest(ActionKind.HOLD, TRAIN))


async def test_read_only_wrapper_over_the_live_actuator(fake: FakeApiServer, connection: Connection) -> None:
    fake.upsert(JOBS, batch_job("train"))
    inner = KubeActuator(KubeActions(KubeClient(connection, read_only=True)))
    try:
        wrapped = ReadOnlyActuator(inner)
        with pytest.raises(ActionRefused):
            await asyncio.to_thread(wrapped.execute, ActionRequest(ActionKind.CANCEL, TRAIN))
        preview = await asyncio.to_thread(inner.preview, ActionRequest(ActionKind.CANCEL, TRAIN))
        assert not preview.allowed and "read-only" in preview.refusal
    finally:
        await asyncio.to_thread(inner.close)
    assert fake.writes() == []


async def test_closing_twice_schedules_nothing_on_the_stopped_loop(connection: Connection) -> None:
    """The console closes its session on quit and again on teardown; the second close is a no-op."""
    actuator = KubeActuator(KubeActions(KubeClient(connection, read_only=True)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await asyncio.to_thread(actuator.close)
        await asyncio.to_thread(actuator.close)
        gc.collect()
    never_awaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
    assert never_awaited == []
    assert actuator.loop.is_closed()  # the first close really stopped and closed its own loop
