"""A recording ``scontrol`` in front of the real one: which commands reached the program.

Why: "read-only runs nothing" is a claim about what was started, so the test reads a log the
program itself writes. The shim is a shell script named ``scontrol`` in a folder put first on
``PATH``; it appends its arguments to ``log`` and ``exec``s the real scontrol unchanged. The
:class:`~tests.slurm.proxy.RecordingProxy` does the same for slurmrestd's HTTP requests.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ScontrolShim:
    folder: Path
    log: Path

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with the shim first on ``PATH``."""
        return {**base, "PATH": f"{self.folder}{os.pathsep}{base.get('PATH', os.defpath)}"}

    def seen(self) -> list[str]:
        """Each command the program was started with, as one line of its arguments."""
        return self.log.read_text().splitlines() if self.log.exists() else []


def scontrol_shim(folder: Path, real: str) -> ScontrolShim:
    """A recording ``scontrol`` in ``folder`` that runs ``real``."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "scontrol.log"
    script = folder / "scontrol"
    script.write_text(
        f'#!/bin/sh\nprintf \'%s\\n\' "$*" >> {shlex.quote(str(log))}\nexec {shlex.quote(real)} "$@"\n'
    )
    script.chmod(0o755)
    return ScontrolShim(folder, log)
