"""An exec credential plugin that overruns its timeout is stopped with everything it started.

Issue 12: a plugin run through a wrapper whose child hangs kept hpctop waiting 102 s while saying
"did not finish within 60 s": only the wrapper was killed, its child kept the stdout pipe open,
and hpctop waited for that pipe's end. Here the plugin is a real shell wrapper whose background
child sleeps holding stdout, loaded through the real kubeconfig loader.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.errors import KubeConfigError
from hpctop.sources.kube.exec_plugin import ExecIO
from tests.kube.conftest import write_kubeconfig

WRAPPER = """#!/bin/sh
sleep 30 &
echo $! > "$1"
sleep 30
"""


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wrapper_config(tmp_path: Path) -> tuple[Path, Path]:
    script, pidfile = tmp_path / "wrapper.sh", tmp_path / "child.pid"
    script.write_text(WRAPPER)
    script.chmod(0o755)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(script),
            "args": [str(pidfile)],
            "interactiveMode": "Never",
        }
    }
    return write_kubeconfig(tmp_path / "config", "http://127.0.0.1:9", user=user), pidfile


@pytest.mark.serial  # wall time: a 0.5 s timeout fires within 3 s
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc to see the child")
async def test_a_wrappers_hanging_child_is_killed_with_it_at_the_timeout(tmp_path: Path) -> None:
    config, pidfile = wrapper_config(tmp_path)
    started = time.monotonic()
    with pytest.raises(KubeConfigError, match=r"did not finish within 0\.5 s"):
        await load_connection(str(config), exec_io=ExecIO(terminal=False, timeout=0.5))
    elapsed = time.monotonic() - started
    child = int(pidfile.read_text())
    assert elapsed < 3.0, f"waited {elapsed:.1f} s for a 0.5 s timeout"
    deadline = time.monotonic() + 2.0
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(child), "the wrapper's child outlived the timeout"
