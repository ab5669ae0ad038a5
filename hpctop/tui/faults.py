"""The console's fault log: where an unexpected exception's details go instead of the screen.

Why a file and not the screen: a console that dies on a key is worse than one that says "that
failed" and goes on, and a traceback drawn over the panes is unreadable anyway. Textual's own
crash report prints every frame's local variables, which on a live cluster means tokens, client
keys and request bodies on the terminal (and in whatever scrollback or recording keeps it). Here
the details are the exception's type, message and frames only (``traceback.format_exception``
never prints locals), sanitised like every other string, appended to
``$XDG_STATE_HOME/hpctop/console.log`` (``~/.local/state/hpctop/console.log``), created 0600. The
status bar gets one line naming the file.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from hpctop.tui.sanitize import sanitize_display

#: how long the newest entries may grow before the file is cut (a crash loop must not fill a disk)
MAX_BYTES = 1_000_000


def default_log_path() -> Path:
    """``$HPCTOP_LOG``, else ``$XDG_STATE_HOME/hpctop/console.log`` (``~/.local/state/...``)."""
    explicit = os.environ.get("HPCTOP_LOG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "hpctop" / "console.log"


def one_line(exc: BaseException, cap: int = 160) -> str:
    """``ValueError: bad thing``, on one sanitised line."""
    message = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return sanitize_display(text, cap=cap)


class FaultLog:
    """Appends one entry per fault: when, where, the exception's frames (no locals)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_log_path()
        self.entries = 0

    def write(self, where: str, exc: BaseException) -> str:
        """Record ``exc``; returns where it went (the path, or why it could not be written)."""
        self.entries += 1
        frames = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        body = sanitize_display(frames, cap=20_000, keep_newlines=True)
        entry = f"--- {stamp} pid {os.getpid()} in {sanitize_display(where, cap=200)}\n{body}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if self.path.exists() and self.path.stat().st_size > MAX_BYTES:
                self.path.unlink()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                out.write(entry)
        except OSError as error:
            return f"(log not written: {error.strerror or error})"
        return str(self.path)
