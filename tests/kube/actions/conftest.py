"""Set-up shared by the actuator tests: the live actuator on the fake API server, with its audit log.

A module that needs another actuator (other poll intervals, no audit) defines its own ``actions``
fixture, which overrides this one for that module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import KubeActions
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient


@pytest.fixture
def audit(tmp_path: Path) -> AuditLog:
    return AuditLog(tmp_path / "state" / "audit.jsonl")


@pytest.fixture
async def actions(connection: Connection, audit: AuditLog) -> AsyncIterator[KubeActions]:
    client = KubeClient(connection, read_only=False)
    core = KubeActions(client, audit=audit)
    yield core
    await core.close()
