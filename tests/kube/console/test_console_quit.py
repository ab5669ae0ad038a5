"""Quitting while the API server accepts connections and never answers (issue 15: 20-28 s today).

A plain TCP listener that accepts and then says nothing: every list, watch, discovery, rules review
and dry run hangs on it. The real console is started on it (real kubeconfig loading, real HTTP),
the first permissions review is left hanging, and ``q`` is pressed: the terminal must be given
back within a second and the process gone just after (Textual's executor used to be joined on the
way out, so a hanging worker held the process, on a blank terminal, for its whole timeout).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kube.conftest import silent_api_server, write_kubeconfig
from tests.tui.test_console_terminal import HPCTOP, _cleanup, _start


@pytest.fixture
def silent_server() -> Iterator[str]:
    with silent_api_server() as url:
        yield url


@pytest.mark.serial  # wall time: the terminal is back within 1 s of q
def test_quit_returns_within_a_second(silent_server: str, tmp_path: Path) -> None:
    """The real ``hpctop`` in a pty: from ``q`` to the terminal given back under a second, and
    the process gone soon after (before: 30 s, a worker's HTTP call being waited for)."""
    config = write_kubeconfig(tmp_path / "kubeconfig", silent_server)
    console = _start(tmp_path, [str(HPCTOP), "--kubeconfig", str(config)])
    try:
        console.wait_drawn()
        time.sleep(1.0)  # discovery, lists and the first permissions review: all hanging now
        os.write(console.master, b"?")  # help: asks the rules review of the selection too
        time.sleep(0.3)
        os.write(console.master, b"\x1b")
        time.sleep(0.3)
        started = time.monotonic()
        os.write(console.master, b"q")
        restored = None
        while console.process.poll() is None and time.monotonic() - started < 30:
            console.read(0.02)
            if restored is None and b"\x1b[?1049l" in console.tail():
                restored = time.monotonic() - started  # the user's screen is back
        status = console.finish(timeout=30)
        gone = time.monotonic() - started
    finally:
        _cleanup(console)
    assert status == 0
    assert restored is not None and restored < 1.0, f"the terminal came back after {restored} s"
    # the process itself: the interpreter's own teardown comes on top (~0.35 s unloaded)
    assert gone < 2.0, f"the process ended {gone:.2f} s after q"
