"""Running the console so that the terminal is given back, whatever ends it.

Textual restores the terminal when the app leaves normally. Everything else was left to chance:

* SIGTERM and SIGHUP killed the process with Python's default action, leaving the alternate
  screen, mouse tracking and the hidden cursor on and the line discipline raw (no echo, no line
  editing): the user's shell looked dead;
* a terminal that went away (a closed tmux pane, an ssh session dropped) was not noticed: the
  input thread reads end-of-file in a loop, at most of a core, for hours (seen with ``make demo``,
  whose ``make`` parent keeps the hangup from reaching hpctop);
* a crash printed a traceback with local variables and exited 0.

:func:`run_console` wraps ``app.run()``: it saves the line discipline first, turns SIGTERM, SIGHUP
and SIGINT into a normal quit with the shell's exit status (143, 129, 130), watches the terminal
(an ``EIO`` from ``tcgetattr`` means it is gone: the app quits with 129) and, if a quit does not end
the process within :data:`HARD_EXIT_AFTER` seconds (a writer blocked on a dead terminal, a worker
stuck in a network call), restores the terminal itself and ends the process. After the app
returns it writes the reset sequences and the saved line discipline again, which is harmless after
a clean exit and what makes a crashed exit clean.

Quitting never waits on the network: Textual runs its thread workers (a permissions review, a dry
run, an Events fetch) on the loop's default executor, and ``asyncio.run`` joins that executor's
threads on the way out, so one call hanging on an API server that accepts and never answers kept
the process alive, on a blank terminal, until its own timeout (20-28 s). The app runs on a loop
of ours whose executor (:class:`DaemonExecutor`) runs each call on a daemon thread and is never
joined: a call still hanging when the console ends is abandoned with the process.

A fatal exception exits 1 (Textual's own ``return_code``), its one-line reason on stderr and the
details in the fault log (:mod:`hpctop.tui.faults`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import sys
import termios
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

#: seconds a quit asked by a signal or a lost terminal may take before the process is ended
HARD_EXIT_AFTER = 2.0
#: seconds between two looks at the terminal
WATCH_INTERVAL = 0.2
#: exit status per signal, as a shell reports a process killed by it (128 + signal number)
SIGNAL_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
#: the terminal went away (as a hangup)
TERMINAL_GONE_STATUS = 129

#: every mode a Textual app may have switched on, off again; then the main screen and the cursor
RESET_SEQUENCES = (
    "\x1b[?1000l"  # mouse: button tracking
    "\x1b[?1002l"  # mouse: drag tracking
    "\x1b[?1003l"  # mouse: any-motion tracking
    "\x1b[?1015l"  # mouse: urxvt encoding
    "\x1b[?1006l"  # mouse: SGR encoding
    "\x1b[?1016l"  # mouse: SGR pixel encoding
    "\x1b[?2004l"  # bracketed paste
    "\x1b[?1004l"  # focus in/out events
    "\x1b[?2048l"  # in-band resize notifications
    "\x1b[<u"  # kitty keyboard protocol: pop
    "\x1b[?7h"  # line wrap back on
    "\x1b[?1049l"  # leave the alternate screen
    "\x1b[?25h"  # show the cursor
)


class ConsoleApp(Protocol):
    """What :func:`run_console` needs of the Textual app."""

    @property
    def return_code(self) -> int | None: ...

    def run(self, *, loop: asyncio.AbstractEventLoop | None = None) -> Any: ...

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...


class DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """An executor for the console's loop: each call on a daemon thread of its own, never joined.

    (A ``ThreadPoolExecutor`` only because asyncio insists on one for the default executor; its
    pool is never used.)"""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="hpctop-worker", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for: calls still running are abandoned (daemon threads)."""


class TerminalGuard:
    """The line discipline as it was before the console, and the way back to it."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.is_tty = os.isatty(fd_in)
        self.saved: list[Any] | None = None
        if self.is_tty:
            with contextlib.suppress(termios.error, OSError):
                self.saved = termios.tcgetattr(fd_in)

    @classmethod
    def for_stdio(cls) -> TerminalGuard:
        """The terminal Textual draws on: input on stdin, output on stderr (its driver's choice)."""
        stdin = sys.__stdin__
        stderr = sys.__stderr__
        fd_in = stdin.fileno() if stdin is not None else 0
        fd_out = stderr.fileno() if stderr is not None else 2
        return cls(fd_in, fd_out)

    def alive(self) -> bool:
        """Whether the terminal is still there (a hung-up tty answers ``EIO``)."""
        try:
            termios.tcgetattr(self.fd_in)
        except (termios.error, OSError):
            return False
        return True

    def restore(self) -> None:
        """Modes off, main screen, cursor on, the saved line discipline; never raises."""
        if not self.is_tty:
            return
        with contextlib.suppress(OSError):
            os.write(self.fd_out, RESET_SEQUENCES.encode())
        if self.saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self.fd_in, termios.TCSANOW, self.saved)


class _Stopper:
    """Turns a signal or a lost terminal into the app's quit, with a deadline."""

    def __init__(self, app: ConsoleApp, guard: TerminalGuard, hard_exit_after: float) -> None:
        self.app = app
        self.guard = guard
        self.hard_exit_after = hard_exit_after
        self.status: int | None = None
        self.finished = threading.Event()

    def request(self, status: int) -> None:
        """Quit with ``status`` (the first reason wins); end the process if the quit hangs."""
        if self.status is not None:
            return
        self.status = status
        threading.Thread(target=self._quit, name="hpctop-quit", daemon=True).start()
        threading.Thread(target=self._deadline, name="hpctop-quit-deadline", daemon=True).start()

    def _quit(self) -> None:
        with contextlib.suppress(Exception):  # not running yet, or already gone
            self.app.call_from_thread(self.app.exit, None, self.status or 0)

    def _deadline(self) -> None:
        if self.finished.wait(self.hard_exit_after):
            return
        self.guard.restore()
        os._exit(self.status or 1)

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.request(SIGNAL_STATUS.get(signal.Signals(signum), 128 + signum))

    def watch(self, interval: float) -> None:
        while not self.finished.wait(interval):
            if not self.guard.alive():
                self.request(TERMINAL_GONE_STATUS)
                return


def run_console(
    app: ConsoleApp,
    *,
    guard: TerminalGuard | None = None,
    hard_exit_after: float = HARD_EXIT_AFTER,
    watch_interval: float = WATCH_INTERVAL,
) -> int:
    """Run ``app`` until it ends; the terminal is restored on every way out. Returns the exit status:
    0 for a quit, 1 for a fatal error, 128 + N for signal N, 129 when the terminal went away."""
    guard = guard if guard is not None else TerminalGuard.for_stdio()
    stopper = _Stopper(app, guard, hard_exit_after)
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNAL_STATUS:
            previous[signum] = signal.signal(signum, stopper.on_signal)
    if guard.is_tty:
        threading.Thread(
            target=stopper.watch, args=(watch_interval,), name="hpctop-terminal-watch", daemon=True
        ).start()
    loop = asyncio.new_event_loop()
    loop.set_default_executor(DaemonExecutor(max_workers=1))
    try:
        app.run(loop=loop)
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        stopper.finished.set()
        guard.restore()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if stopper.status is not None:
        return stopper.status
    return app.return_code or 0
