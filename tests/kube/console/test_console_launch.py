"""Before the console starts: an exec credential plugin that hangs (issue 12).

The real ``hpctop`` with a kubeconfig whose user is a plugin that never answers: the terminal is
not blank (a line says what hpctop waits for), and ctrl+c (SIGINT) there is one clean line and
exit status 130, not a ``KeyboardInterrupt`` traceback. Killing the plugin's own process group
is the exec plugin runner's business; the test only cleans up after it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.kube.conftest import write_kubeconfig

HPCTOP = Path(sys.executable).with_name("hpctop")
HANGING_PLUGIN = "import time\ntime.sleep(120)\n"


@pytest.mark.serial  # wall time: the console must still be connecting 1 s after its start
def test_ctrl_c_while_the_plugin_hangs(tmp_path: Path, server_url: str) -> None:
    script = tmp_path / "plugin.py"
    script.write_text(HANGING_PLUGIN)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
            "interactiveMode": "Never",
        }
    }
    config = write_kubeconfig(tmp_path / "config", server_url, user=user)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    process = subprocess.Popen(
        [str(HPCTOP), "--kubeconfig", str(config)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # its own group: the plugin it starts is cleaned up with it below
    )
    try:
        time.sleep(1.0)  # connecting: the plugin runs and hangs
        assert process.poll() is None
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
        assert process.returncode == 130
        text = err.decode()
        assert "connecting to" in text  # the terminal was not blank meanwhile
        assert "Traceback" not in text and "KeyboardInterrupt" not in text
        assert text.strip().splitlines()[-1] == "hpctop: interrupted before the console started"
    finally:
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)
