"""The real console in a real pseudo-terminal: what it leaves behind when it ends.

Each test starts ``hpctop --demo`` (the installed entry point, its own session, the pty as its
controlling terminal), waits for the first frame, ends it one way (SIGTERM, SIGHUP, SIGINT, the
terminal closed, a crash) and then looks at the terminal as the user's shell would find it: the
line discipline (echo and canonical input back on), the alternate screen left, every mouse
tracking mode off, the cursor shown, and the exit status a shell reports (128 + the signal).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pty and /proc are Linux's")

HPCTOP = Path(sys.executable).with_name("hpctop")
ROOT = Path(__file__).resolve().parents[2]
ALT_SCREEN_ON = b"\x1b[?1049h"
#: what must come after the console's last frame: mouse modes off, main screen, cursor shown
MUST_RESET = (b"\x1b[?1000l", b"\x1b[?1003l", b"\x1b[?1006l", b"\x1b[?1049l", b"\x1b[?25h")
#: how long a test waits for the console to end: what is checked is *that* it ends and what it
#: leaves (bench/quit_latency.py measures how fast); a loaded machine only makes it later
ENDS_WITHIN_S = 30.0


@dataclass
class Console:
    process: subprocess.Popen[bytes]
    master: int
    slave: int
    mark: str
    output: bytearray

    def read(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                if self.process.poll() is not None:
                    return
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output += chunk

    def wait_drawn(self, timeout: float = 60.0) -> None:
        """Until the console has entered the alternate screen and drawn its status bar."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.read(0.2)
            at = self.output.find(ALT_SCREEN_ON)
            if at >= 0 and b"GPUs" in self.output[at:]:
                return
            assert self.process.poll() is None, f"hpctop ended early: {bytes(self.output[-2000:])!r}"
        raise AssertionError(f"no first frame within {timeout} s: {bytes(self.output[-2000:])!r}")

    def finish(self, timeout: float = ENDS_WITHIN_S) -> int:
        """Read until the process ends; its exit status as a shell reports it."""
        end = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < end:
            self.read(0.1)
        self.read(0.2)
        code = self.process.poll()
        assert code is not None, "hpctop still running"
        return 128 - code if code < 0 else code

    def tail(self) -> bytes:
        """What was written after the last frame began (after the last alternate-screen entry)."""
        return bytes(self.output[self.output.rfind(ALT_SCREEN_ON) :])


def _start(tmp_path: Path, argv: list[str], sighup_ignored: bool = False) -> Console:
    master, slave = os.openpty()
    os.set_blocking(master, False)
    mark = uuid.uuid4().hex
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "40",
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "HPCTOP_TEST_MARK": mark,
    }
    env.pop("TEXTUAL_DRIVER", None)
    termios.tcsetattr(slave, termios.TCSANOW, termios.tcgetattr(slave))

    def child_setup() -> None:
        os.setsid()
        import fcntl

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        if sighup_ignored:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)

    process = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=ROOT,
        preexec_fn=child_setup,
        close_fds=True,
    )
    return Console(process, master, slave, mark, bytearray())


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    c = _start(tmp_path, [str(HPCTOP), "--demo"])
    yield c
    _cleanup(c)


def _cleanup(c: Console) -> None:
    for pid in _marked(c.mark):
        os.kill(pid, signal.SIGKILL)
    if c.process.poll() is None:
        c.process.kill()
        c.process.wait(5)
    for fd in (c.master, c.slave):
        with contextlib.suppress(OSError):
            os.close(fd)


def _marked(mark: str) -> list[int]:
    """Processes carrying this test's mark in their environment (hpctop and whatever started it)."""
    found = []
    needle = f"HPCTOP_TEST_MARK={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if needle in environ.split(b"\0") and stat.rsplit(")", 1)[-1].split()[0] != "Z":
            found.append(int(entry.name))
    return found


def _assert_restored(c: Console) -> None:
    attrs = termios.tcgetattr(c.slave)
    lflag = attrs[3]
    assert lflag & termios.ECHO, "echo left off"
    assert lflag & termios.ICANON, "canonical (line) input left off"
    tail = c.tail()
    for sequence in MUST_RESET:
        assert sequence in tail, f"{sequence!r} not written after the last frame"


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)]
)
def test_signal_restores_terminal(console: Console, signum: int, status: int) -> None:
    console.wait_drawn()
    console.process.send_signal(signum)
    assert console.finish() == status
    _assert_restored(console)


def test_closed_terminal_ends_the_console(console: Console) -> None:
    console.wait_drawn()
    os.close(console.master)
    console.master = os.open(os.devnull, os.O_RDONLY)  # for _cleanup
    end = time.monotonic() + ENDS_WITHIN_S
    while console.process.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert console.process.poll() is not None, "hpctop still running after its terminal closed"


def test_closed_terminal_ends_make_demo(tmp_path: Path) -> None:
    """``make demo`` as in a tmux pane; the hangup does not reach hpctop, the terminal's end does."""
    makefile = tmp_path / "Makefile"
    makefile.write_text(f"demo:\n\t{HPCTOP} --demo\n")
    c = _start(tmp_path, ["make", "-s", "-f", str(makefile), "demo"], sighup_ignored=True)
    try:
        c.wait_drawn()
        assert _marked(c.mark), "no hpctop process found"
        os.close(c.master)
        c.master = os.open(os.devnull, os.O_RDONLY)
        end = time.monotonic() + ENDS_WITHIN_S
        while _marked(c.mark) and time.monotonic() < end:
            time.sleep(0.1)
            c.process.poll()
        assert not _marked(c.mark), "hpctop (or make) still running after the terminal closed"
    finally:
        _cleanup(c)


CRASHING_APP = """
import sys
from pathlib import Path
import hpctop.tui.app
from hpctop.runtime.session import demo_session
from hpctop.tui.app import HpctopApp
from hpctop.tui.terminal import run_console

SECRET = "s3cr3t-" + "token-value"


class Crashing(HpctopApp):
    CSS_PATH = str(Path(hpctop.tui.app.__file__).with_name("hpctop.tcss"))

    def on_key(self, event: object) -> None:
        # the test presses "!" once it has seen the first frame (a fixed delay from mount raced
        # the first frame on a loaded machine); a timer callback that raises: fatal to Textual
        if getattr(event, "character", None) == "!":
            self.set_timer(0.1, self.crash)

    def crash(self) -> None:
        local_secret = SECRET
        raise RuntimeError("planted fatal error " + str(len(local_secret)))


sys.exit(run_console(Crashing(demo_session(), tick_interval=0.2)))
"""


def test_fatal_error_exits_nonzero_restored_without_locals(tmp_path: Path) -> None:
    script = tmp_path / "crash.py"
    script.write_text(CRASHING_APP)
    c = _start(tmp_path, [sys.executable, str(script)])
    try:
        c.wait_drawn()
        os.write(c.master, b"!")
        status = c.finish()
        assert status == 1
        _assert_restored(c)
        text = c.tail().decode("utf-8", "replace")
        assert "planted fatal error" in text
        assert "s3cr3t-token-value" not in text and "local_secret" not in text
        log = (tmp_path / "state" / "hpctop" / "console.log").read_text()
        assert "planted fatal error" in log and "s3cr3t-token-value" not in log
    finally:
        _cleanup(c)
