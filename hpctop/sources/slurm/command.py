"""The local Slurm client (``scontrol``), for the job action slurmrestd up to v0.0.44 does not serve.

Why it exists: ``scontrol requeue`` is an RPC of its own (``REQUEST_JOB_REQUEUE``,
``slurm_requeue2()``); slurmrestd serves it only from v0.0.45 (Slurm 26.05, SchedMD/slurm
0f73a8143e "slurmrestd - Add requeue endpoint"). A Slurm user on an older slurmrestd requeues with
``scontrol``, so hpctop does the same where that client is installed, through the same preview,
confirm, execute and audit path as the slurmrestd actions (:mod:`hpctop.backends.slurm.act`).

Why these checks before anything runs:

- **The same cluster.** scontrol talks to whatever ``slurm.conf``, ``SLURM_CONF`` or DNS SRV
  records point it at, which need not be the slurmrestd hpctop reads. ``scontrol show config``
  asks slurmctld for its configuration, so its ``ClusterName`` is the controller's own; it must
  equal the cluster slurmrestd names (:meth:`SlurmRest.cluster`), or nothing is run.
- **The same user.** scontrol authenticates as the local Unix user (munge), not as the user of
  slurmrestd's token; an action that would run as someone else is refused.
- **Read-only where commands start.** Every command passes through :meth:`SlurmRest.gate`, the
  check slurmrestd's requests pass in :meth:`SlurmRest._send`, before a process is started: a read
  (``show config``) goes, an action raises
  :class:`~hpctop.sources.kube.transport.ReadOnlyViolation` from a read-only client.
- **Slurm's own words.** A failed command's text (``Invalid job id specified``, ``Job is pending
  execution``, ``Access/permission denied``) comes back as a :class:`SlurmError` marked Slurm's,
  sanitised to one line; a command that hangs (a controller that cannot be reached retries for up
  to a minute) is stopped after ``timeout`` seconds.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from hpctop.sanitize import sanitize_line
from hpctop.sources.slurm.rest import SlurmError, SlurmRest

__all__ = ["INSTALL_HINT", "SlurmCommand"]

INSTALL_HINT = (
    "install Slurm's client tools configured for this cluster (Debian/Ubuntu: apt-get install "
    "slurm-client; RHEL: dnf install slurm) so that 'scontrol' is on PATH"
)
_CLUSTER = re.compile(r"^ClusterName\s*=\s*(\S+)\s*$", re.MULTILINE)


class SlurmCommand:
    """``scontrol`` on this machine, gated by ``rest``'s read-only check; ``env`` is its environment."""

    def __init__(
        self,
        rest: SlurmRest,
        *,
        program: str = "scontrol",
        env: Mapping[str, str] | None = None,
        timeout: float = 20.0,
    ) -> None:
        self.rest = rest
        self.program = program
        self.env = dict(os.environ if env is None else env)
        self.timeout = timeout

    def which(self) -> str | None:
        """The program's path on this environment's ``PATH`` (None: not installed)."""
        return shutil.which(self.program, path=self.env.get("PATH", os.defpath))

    @staticmethod
    def local_user() -> str:
        """The Unix user scontrol authenticates as (munge identifies the calling process)."""
        return pwd.getpwuid(os.geteuid()).pw_name

    def cluster(self) -> str:
        """The ``ClusterName`` of the slurmctld scontrol reaches (``scontrol show config``)."""
        found = _CLUSTER.search(self._run(("show", "config"), acts=False))
        if found is None:
            raise SlurmError("'scontrol show config' printed no ClusterName")
        return found.group(1)

    def requeue(self, job_id: str, *, hold: bool = False) -> str:
        """``scontrol requeue <id>`` (``requeuehold`` with ``hold``); what scontrol printed."""
        return self._run(("requeuehold" if hold else "requeue", job_id), acts=True)

    @staticmethod
    def describe(args: Sequence[str]) -> str:
        return " ".join(("scontrol", *args))

    def _run(self, args: Sequence[str], *, acts: bool) -> str:
        """The one place a process starts: gated first, then run with a timeout, never a shell."""
        self.rest.gate("RUN" if acts else "GET", self.describe(args))
        conf = self.env.get("SLURM_CONF")
        if conf and not os.path.exists(conf):  # scontrol would retry for a minute before saying so
            raise SlurmError(f"SLURM_CONF names {conf!r}, which does not exist")
        path = self.which()
        if path is None:
            raise SlurmError(f"no '{self.program}' on PATH: {INSTALL_HINT}")
        try:
            done = subprocess.run(
                [path, *args],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SlurmError(
                f"'{self.describe(args)}' gave no answer within {self.timeout:g} s "
                "(is slurmctld reachable from here?)"
            ) from None
        except OSError as err:
            raise SlurmError(f"cannot run {path}: {err}") from err
        if done.returncode != 0:
            said = sanitize_line((done.stderr or done.stdout).strip().replace("\n", "; "))
            said = said or f"exit status {done.returncode}"
            raise SlurmError(said if said.startswith("scontrol:") else f"scontrol: {said}", slurm=True)
        return done.stdout
