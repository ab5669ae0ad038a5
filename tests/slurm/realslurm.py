"""A real Slurm (Debian's 22.05 packages) started in a temporary folder for the Slurm tests.

Why a real one: hpctop's Slurm rows must read exactly like ``squeue``/``sprio``; only the real
slurmctld and slurmrestd say what those are. The cluster is one munged, one slurmctld, a few
``slurmd -N <name>`` (each node on its own 127.0.0.1 port) and slurmrestd on a local port with
``auth/jwt``. Facts this relies on (learned on Debian 12): 22.05 decides which daemon it is from
the program name (``/usr/sbin/slurmctld`` etc. are such names); the GPU GRES plugin drops GPUs
that have no ``File=``, so gres.conf points at empty files; ``slurm-wlm-emulator`` must not be
installed (it switches slurmctld to a front-end build that refuses this config).

With ``accounting=True`` the cluster also keeps accounts (what ``sshare``, ``sacctmgr`` and fair
share need): a MariaDB of its own (``mariadb-install-db`` into the temporary folder, ``mariadbd``
on a unix socket there, no network, no system service), ``slurmdbd`` on a local port storing into
it, ``accounting_storage/slurmdbd`` with multifactor priority that weighs fair share and QOS, and
slurmrestd serving the accounting API (``openapi/dbv0.0.38``) too. Facts this relies on: slurmdbd
reads ``slurmdbd.conf`` beside ``$SLURM_CONF``, must own it with mode 0600, and reaches MariaDB's
socket through ``MYSQL_UNIX_PORT`` (Slurm's mysql plugin passes no socket of its own); MariaDB's
root is authenticated by the unix socket, so slurmdbd running as root needs no password; the
cluster is added with ``sacctmgr`` before slurmctld starts, so slurmctld finds its associations on
its first registration.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROGRAMS = (
    "munged",
    "slurmctld",
    "slurmd",
    "slurmrestd",
    "sinfo",
    "scancel",
    "squeue",
    "sbatch",
    "scontrol",
    "sprio",
)
INSTALL_HINT = (
    "real Slurm not installed: apt-get install slurmctld slurmd slurmrestd slurm-client munge "
    "slurm-wlm-jwt-plugin "
    "(Debian 12; running as root)"
)
ACCOUNTING_PROGRAMS = ("slurmdbd", "mariadbd", "mariadb-install-db", "sacctmgr", "sshare")
ACCOUNTING_HINT = (
    "Slurm accounting not installed: apt-get install slurmdbd mariadb-server (Debian 12; running as root)"
)
NODES = ("sn1", "sn2", "sn3")
#: what an accounting cluster starts with (``sacctmgr -i ...``, before slurmctld, so slurmctld's
#: first fair-share pass sees them): two accounts with their own shares, a sub-account with shares
#: of its own and one that takes its parent's (``parent``), root a user of each, and QOS whose
#: priority, preemption and limits differ
ACCOUNTING = (
    ("add", "qos", "low", "priority=10", "UsageFactor=0.5"),
    ("add", "qos", "high", "priority=100", "preempt=low", "MaxWall=01:00:00", "GrpTRES=cpu=10"),
    ("modify", "qos", "where", "name=high", "set", "MaxJobsPerUser=3", "MaxSubmitJobsPerUser=8"),
    ("add", "account", "physics", "fairshare=30"),
    ("add", "account", "chemistry", "fairshare=10"),
    ("add", "account", "bio", "parent=physics", "fairshare=5"),
    ("add", "account", "theory", "parent=physics", "fairshare=parent"),
    ("add", "user", "root", "account=physics,chemistry,bio,theory", "qos=normal,high,low"),
    ("modify", "user", "where", "name=root", "account=bio", "set", "fairshare=3"),
)
#: after slurmctld registered: a GRES limit needs the ``gres/gpu`` TRES, which slurmdbd learns from
#: slurmctld's ``AccountingStorageTRES``
ACCOUNTING_LATER = (("modify", "qos", "where", "name=high", "set", "MaxTRESPerUser=gres/gpu=4"),)
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")


def which(program: str) -> str | None:
    found = shutil.which(program)
    if found:
        return found
    for folder in SBIN:
        path = os.path.join(folder, program)
        if os.access(path, os.X_OK):
            return path
    return None


def missing(*, accounting: bool = False) -> str | None:
    """Why a real Slurm (with ``accounting``: and its slurmdbd) cannot be started here (None when it can)."""
    absent = [p for p in PROGRAMS if which(p) is None]
    if absent:
        return f"{INSTALL_HINT}; missing: {' '.join(absent)}"
    absent = [p for p in ACCOUNTING_PROGRAMS if accounting and which(p) is None]
    if absent:
        return f"{ACCOUNTING_HINT}; missing: {' '.join(absent)}"
    if os.geteuid() != 0:
        return "real Slurm tests need root (slurmd runs jobs as their user)"
    if Path("/usr/sbin/slurmctld-wlm-emulator").exists() or which("slurmctld-wlm-emulator"):
        return "slurm-wlm-emulator is installed; it switches slurmctld to a front-end build"
    return None


def hpctop_cli(cluster: RealSlurm, *args: str, token: str) -> subprocess.CompletedProcess[str]:
    """``hpctop ARGS --slurm-url <cluster> --slurm-user root``, the JWT in the environment only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "KUBECONFIG"))}
    env["SLURM_JWT"] = token  # in the environment, as 'scontrol token' hands it out: never on disk
    env["HPCTOP_NO_CACHE"] = "1"
    argv = [sys.executable, "-m", "hpctop", *args, "--slurm-url", cluster.url, "--slurm-user", "root"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwt(key: bytes, user: str, lifetime: int = 3600) -> str:
    """An HS256 token as ``scontrol token`` makes one (claims ``exp``, ``iat``, ``sun``)."""
    now = int(time.time())
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64(json.dumps({"exp": now + lifetime, "iat": now, "sun": user}).encode())
    signed = f"{header}.{claims}".encode()
    signature = _b64(hmac.new(key, signed, hashlib.sha256).digest())
    return f"{header}.{claims}.{signature}"


@dataclass
class RealSlurm:
    root: Path
    ctld_port: int = field(default_factory=free_port)
    rest_port: int = field(default_factory=free_port)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    jwt_key: bytes = b""
    #: keep accounts: MariaDB, slurmdbd, fair share and QOS in the priority (see the module's docstring)
    accounting: bool = False
    dbd_port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.root / "slurm.conf")
        env["MYSQL_UNIX_PORT"] = str(self.root / "run" / "mysql.sock")  # slurmdbd's way to the socket
        env.pop("SLURM_JWT", None)
        return env

    def token(self, user: str = "root") -> str:
        return make_jwt(self.jwt_key, user)

    def write_config(self) -> None:
        r = self.root
        for sub in ("state", "spool", "log", "run", "gres"):
            (r / sub).mkdir(parents=True, exist_ok=True)
        r.chmod(0o755)  # slurmrestd runs as nobody and reads slurm.conf; munged wants a reachable socket
        for name in NODES:
            (r / "spool" / name).mkdir(parents=True, exist_ok=True)
        for i in range(2):
            (r / "gres" / f"gpu{i}").touch()
        self.jwt_key = os.urandom(32)
        (r / "jwt.key").write_bytes(self.jwt_key)
        (r / "jwt.key").chmod(0o600)
        (r / "munge.key").write_bytes(os.urandom(1024))
        (r / "munge.key").chmod(0o600)
        ports = {name: free_port() for name in NODES}
        nodes = "\n".join(
            f"NodeName={n} NodeHostname=localhost NodeAddr=127.0.0.1 Port={p} CPUs=4 RealMemory=4000 "
            "Gres=gpu:2 State=UNKNOWN"
            for n, p in ports.items()
        )
        conf = f"""\
ClusterName=hpctop
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={self.ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={r}/run/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key={r}/jwt.key
CredType=cred/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool/%n
SlurmctldPidFile={r}/run/slurmctld.pid
SlurmdPidFile={r}/run/slurmd-%n.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightJobSize=1000
PriorityWeightPartition=1000
PriorityMaxAge=1-0
{self._accounting_conf()}
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=1
MinJobAge=2
{nodes}
PartitionName=gpu Nodes={",".join(NODES)} Default=YES MaxTime=INFINITE State=UP PriorityJobFactor=10
PartitionName=debug Nodes={NODES[0]} MaxTime=INFINITE State=UP PriorityJobFactor=1
"""
        (r / "slurm.conf").write_text(conf)
        gres = "\n".join(f"NodeName={n} Name=gpu File={r}/gres/gpu[0-1]" for n in NODES)
        (r / "gres.conf").write_text(gres + "\n")
        if self.accounting:
            dbd = r / "slurmdbd.conf"
            dbd.write_text(
                f"""\
AuthType=auth/munge
AuthInfo=socket={r}/run/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key={r}/jwt.key
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={self.dbd_port}
SlurmUser=root
PidFile={r}/run/slurmdbd.pid
LogFile={r}/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
"""
            )
            dbd.chmod(0o600)

    def _accounting_conf(self) -> str:
        """slurm.conf's accounting and the priority weights that depend on it."""
        if not self.accounting:
            none = "AccountingStorageType=accounting_storage/none"
            return f"PriorityWeightQOS=0\nPriorityWeightFairshare=0\n{none}"
        # fair share and QOS weigh in; no decay, so a finished job's usage stays what it was
        return f"""\
PriorityWeightQOS=1000
PriorityWeightFairshare=10000
PriorityDecayHalfLife=0
PriorityUsageResetPeriod=NONE
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort={self.dbd_port}
AccountingStoragePass={self.root}/run/munge.socket
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu"""

    def _spawn(self, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.root / "log" / f"{Path(argv[0]).name}-{len(self.procs)}.out", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.procs.append(proc)
        return proc

    def start(self, timeout: float = 20.0) -> None:
        self.write_config()
        r = self.root
        self._spawn(
            [
                str(which("munged")),
                "-F",
                "--force",
                f"--key-file={r}/munge.key",
                f"--socket={r}/run/munge.socket",
                f"--pid-file={r}/run/munged.pid",
                f"--log-file={r}/log/munged.log",
                f"--seed-file={r}/run/munge.seed",
            ]
        )
        self._wait(lambda: (r / "run" / "munge.socket").exists(), 5, "munged")
        if self.accounting:
            self._start_accounting(timeout)
        self._spawn(["/usr/sbin/slurmctld", "-D", "-i"])
        self._wait(self._ctld_up, timeout, "slurmctld")
        for command in ACCOUNTING_LATER if self.accounting else ():
            self._wait(lambda c=command: self._try_sacctmgr(c), timeout, f"sacctmgr {' '.join(command)}")
        for name in NODES:
            self._spawn(["/usr/sbin/slurmd", "-D", "-N", name])
        rest_env = self.env
        rest_env["SLURM_JWT"] = "daemon"
        log = open(r / "log" / "slurmrestd.out", "wb")  # noqa: SIM115
        self.procs.append(
            subprocess.Popen(
                [
                    "/usr/sbin/slurmrestd",
                    "-s",
                    "openapi/v0.0.38,openapi/dbv0.0.38" if self.accounting else "openapi/v0.0.38",
                    "-a",
                    "rest_auth/jwt",
                    "-u",
                    "nobody",
                    f"127.0.0.1:{self.rest_port}",
                ],
                env=rest_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        self._wait(self._nodes_idle, timeout, "slurmd nodes idle")
        self._wait(self._rest_up, timeout, "slurmrestd")

    #: MariaDB sized for a test: small files, no binary log, no flush per commit (nothing to keep)
    _MARIADB_OPTIONS = (
        "--innodb-log-file-size=4M",
        "--innodb-buffer-pool-size=16M",
        "--innodb-data-file-path=ibdata1:4M:autoextend",
    )

    def _start_accounting(self, timeout: float) -> None:
        """MariaDB on a socket in the temporary folder, slurmdbd on it, and this cluster registered."""
        r = self.root
        socket_path = r / "run" / "mysql.sock"
        install = [str(which("mariadb-install-db")), "--no-defaults", f"--datadir={r}/db", "--user=root"]
        install += ["--skip-test-db", "--skip-name-resolve", "--auth-root-authentication-method=socket"]
        done = subprocess.run(
            [*install, *self._MARIADB_OPTIONS], capture_output=True, text=True, timeout=60, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {done.stdout[-1500:]}{done.stderr[-1500:]}")
        self._spawn(
            [
                str(which("mariadbd")),
                "--no-defaults",
                f"--datadir={r}/db",
                f"--socket={socket_path}",
                "--skip-networking",
                "--user=root",
                f"--pid-file={r}/run/mariadb.pid",
                f"--log-error={r}/log/mariadb.log",
                "--skip-log-bin",
                "--innodb-flush-log-at-trx-commit=0",
                *self._MARIADB_OPTIONS,
            ]
        )
        self._wait(socket_path.exists, timeout, "mariadbd")
        self.start_slurmdbd(timeout)
        self.sacctmgr("add", "cluster", "hpctop")
        # two runs: one run keeps the QOS list it read first, so users can name only QOS made before it
        self.sacctmgr_script([c for c in ACCOUNTING if c[:2] == ("add", "qos")])
        self.sacctmgr_script([c for c in ACCOUNTING if c[:2] != ("add", "qos")])

    def start_slurmdbd(self, timeout: float = 20.0) -> None:
        """slurmdbd (again, after a test stopped it), back when sacctmgr reaches it."""
        self._spawn([str(which("slurmdbd")), "-D"])
        self._wait(self._dbd_up, timeout, "slurmdbd")

    def _dbd_up(self) -> bool:
        done = self.run([str(which("sacctmgr")), "-n", "-P", "show", "cluster"], check=False)
        return done.returncode == 0

    def daemon(self, program: str) -> subprocess.Popen[bytes]:
        """The process of one daemon this cluster started (``slurmdbd``, ``mariadbd``)."""
        return next(
            p for p in self.procs if isinstance(p.args, list) and Path(str(p.args[0])).name == program
        )

    def sacctmgr_script(self, commands: Sequence[tuple[str, ...]]) -> None:
        """Several sacctmgr commands in one run (its interactive mode reads them from stdin: one
        process and one slurmdbd connection instead of one each); any error fails the set-up."""
        script = "".join(" ".join(command) + "\n" for command in commands)
        done = subprocess.run(
            [str(which("sacctmgr")), "-i"],
            input=script,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0 or "error" in done.stderr.lower():
            raise RuntimeError(f"sacctmgr set-up failed: {done.stdout[-800:]}{done.stderr[-800:]}")

    def _try_sacctmgr(self, command: tuple[str, ...]) -> bool:
        return self.run([str(which("sacctmgr")), "-i", *command], check=False).returncode == 0

    def sacctmgr(self, *args: str) -> str:
        """``sacctmgr -i ARGS`` (no questions asked); its output."""
        done = self.run([str(which("sacctmgr")), "-i", *args], check=False)
        if done.returncode != 0:
            raise RuntimeError(f"sacctmgr {' '.join(args)}: {done.stdout[-500:]}{done.stderr[-500:]}")
        return done.stdout

    def _wait(self, ready: object, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if callable(ready) and ready():
                return
            time.sleep(0.1)
        logs = "\n".join(
            f"--- {p.name}\n{p.read_text()[-1500:]}" for p in sorted((self.root / "log").iterdir())
        )
        raise RuntimeError(f"{what} did not come up in {timeout:.0f} s\n{logs}")

    def _ctld_up(self) -> bool:
        return self.run(["scontrol", "ping"], check=False).returncode == 0

    def _nodes_idle(self) -> bool:
        out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], check=False).stdout
        states = dict(line.split() for line in out.splitlines() if line.strip())
        return all(states.get(n, "").startswith("idle") for n in NODES)

    def _rest_up(self) -> bool:
        try:
            request = urllib.request.Request(
                f"{self.url}/slurm/v0.0.38/ping",
                headers={"X-SLURM-USER-NAME": "root", "X-SLURM-USER-TOKEN": self.token()},
            )
            with urllib.request.urlopen(request, timeout=1) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    def run(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, check=check, timeout=30)

    def sbatch(self, *args: str, command: str = "sleep 600") -> str:
        out = self.run(["sbatch", "--parsable", "-o", "/dev/null", *args, "--wrap", command]).stdout
        return out.strip().split(";")[0]

    def reset(self, timeout: float = 15.0) -> None:
        """No jobs left and every node back in service (what one test leaves must not reach the next)."""
        self.run(["scancel", "--quiet", "--user=root"], check=False)
        for name in NODES:
            self.run(["scontrol", "update", f"nodename={name}", "state=resume"], check=False)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.run(["squeue", "-h", "-o", "%i"]).stdout.strip() and self._nodes_idle():
                return
            time.sleep(0.3)

    def stop(self) -> None:
        self.run(["scancel", "--quiet", "--user=root"], check=False)
        for proc in reversed(self.procs):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
