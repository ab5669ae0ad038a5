"""Command line: the console (``hpctop``) and one-shot Slurm-style tables (``hpctop jobs`` ...).

Users come from Slurm, so the subcommands mirror the commands they know: ``jobs`` is squeue,
``queues`` is sshare, ``nodes`` and ``gpus`` are sinfo (with GPU columns), ``prio`` is sprio.
Filters take the same shapes as there (comma-separated lists, squeue state codes such as
``PD,R``), and ``-o json`` gives deterministic output for scripts: the same ``--seed`` and
``--at`` give the same bytes.

The same entry point serves as a kubectl plugin: kubectl runs ``kubectl-hpctop jobs`` for
``kubectl hpctop jobs``, with the same arguments, so only the program name in messages changes.

Errors a user can cause (an unknown state, a missing scenario file, a bad config value) are
:class:`~hpctop.errors.HpctopError` subclasses, printed as one line on stderr with the error's
exit status (2 for usage, config and scenario errors); argparse's own errors are turned into
:class:`~hpctop.errors.UsageError` so they follow the same rule. The console is imported only
when it is started, so the tables never load Textual.

Why one module of this size: it is the whole command line, the parser and every
subcommand's handler, which share the helpers for sources, filters, output and errors; the
Slurm handlers (``--slurm-url``/``--slurm-service``: ``_slurm_*``) are thin and call
:mod:`hpctop.tables.slurm` and :mod:`hpctop.sources.slurm`. Splitting it means moving those shared
helpers out first (left for a change of its own).
"""

from __future__ import annotations

import argparse
import os
import sys

from hpctop import __version__
from hpctop.errors import HpctopError, UsageError
from hpctop.tables import keys as table_keys
from hpctop.tables.keys import NODE_STATES, QUEUE_STATES

#: ``typing.TYPE_CHECKING`` without importing :mod:`typing` (mypy reads any ``TYPE_CHECKING`` so):
#: ``hpctop --help`` imports nothing it does not need (bench S1: within 3x a bare interpreter)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence
    from types import ModuleType
    from typing import Any, NoReturn, Protocol, TextIO, TypeVar

    from hpctop.backends.slurm.wire import SlurmJob
    from hpctop.config import Settings
    from hpctop.model.policy import Policy
    from hpctop.model.store import Snapshot
    from hpctop.runtime.live_console import LiveConsoleSession
    from hpctop.scheduling.types import ScheduleResult
    from hpctop.sources.slurm.rest import SlurmRest
    from hpctop.tables.render import Column, Row
    from hpctop.tui.app import HpctopApp

    T = TypeVar("T")

    class SessionLike(Protocol):
        """What the CLI needs from :class:`hpctop.runtime.session.Session`."""

        policy: Policy
        speed: float
        snapshot: Snapshot
        result: ScheduleResult

        @property
        def now(self) -> float: ...


#: the output formats of :func:`hpctop.tables.render.render` (the same tuple, checked by
#: tests/cli/test_cli_lazy.py): named here so building the parser does not import the renderer
FORMATS = ("table", "json", "csv", "tsv")
#: the attribute that marks the last-resort log handler as hpctop's sanitised one
_SANITIZED = "hpctop_sanitized"


def _warn(message: str) -> None:
    """One line on stderr, sanitised: server messages and notes carry cluster text (issue 12)."""
    from hpctop.sanitize import sanitize_line

    print(sanitize_line(message), file=sys.stderr)


def _sanitize_log_output() -> None:
    """Python's last-resort log handler (warnings to stderr when nothing is configured), sanitised.

    A library's warning quotes what the server said (a reflector's retry, the kubernetes client):
    it reaches the terminal through this handler, so it goes through the same sanitiser. Set up
    once the arguments are parsed: ``--help`` needs no :mod:`logging`.
    """
    import logging

    from hpctop.sanitize import DETAIL_CAP, sanitize_display

    class SanitizedStderr(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                text = sanitize_display(self.format(record), keep_newlines=True, cap=DETAIL_CAP)
                sys.stderr.write(text + "\n")
            except Exception:
                self.handleError(record)

    if not getattr(logging.lastResort, _SANITIZED, False):
        handler = SanitizedStderr(logging.WARNING)
        setattr(handler, _SANITIZED, True)
        logging.lastResort = handler


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`UsageError` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's formatter imports shutil (with bz2, lzma, zlib, fnmatch) for the width alone,
        # and every add_subparsers builds one: the same width, read without it (bench S1)
        return argparse.HelpFormatter(prog=self.prog, width=terminal_columns() - 2)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil: $COLUMNS when it is a
    positive number, else the terminal's width on stdout, else 80 (tests/cli/test_cli_lazy.py)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


def _prog(argv0: str | None = None) -> str:
    name = os.path.basename(argv0 or (sys.argv[0] if sys.argv else "") or "hpctop")
    if name.startswith("kubectl-"):
        return "kubectl " + name.removeprefix("kubectl-")
    return "hpctop"


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    import math  # only when a value is given: --help and version do not load it (S1)

    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds, 0 or more")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    import math  # only when a value is given: --help and version do not load it (S1)

    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
    return value


def _source_options() -> _Parser:
    # Defaults are SUPPRESS so that a flag given before the subcommand (``hpctop --seed 3 jobs``)
    # is not overwritten by the subcommand's default: both spellings work.
    group = _Parser(add_help=False)
    opts = group.add_argument_group("source")
    quiet = argparse.SUPPRESS
    opts.add_argument(
        "--demo", action="store_true", default=quiet, help="the simulated demo cluster (the default source)"
    )
    opts.add_argument(
        "--scenario", metavar="FILE", default=quiet, help="a simulated cluster from a scenario file"
    )
    opts.add_argument("--seed", metavar="N", type=_seed, default=quiet, help="random seed of the simulation")
    opts.add_argument(
        "--gpu-api",
        choices=("device-plugin", "dra"),
        default=quiet,
        help="how the simulated cluster hands out GPUs: the device plugin's nvidia.com/gpu (default) "
        "or DRA ResourceSlices and ResourceClaims",
    )
    opts.add_argument(
        "--scheduler",
        choices=("hpctop", "kai"),
        default=quiet,
        help="demo: also write this scheduler's objects (kai: KAI-Scheduler Queues, PodGroups, GPU shares)",
    )
    opts.add_argument(
        "--at",
        metavar="SECONDS",
        type=_seconds,
        default=quiet,
        help="advance the virtual clock this far first (t=0 is 2026-01-01T00:00:00Z)",
    )
    opts.add_argument("--config", metavar="PATH", default=quiet, help="config file (default: XDG location)")
    opts.add_argument(
        "--no-cache",
        action="store_true",
        default=quiet,
        help="tables: neither read nor keep the demo's or scenario's answer in the cache "
        "(also HPCTOP_NO_CACHE=1)",
    )
    opts.add_argument(
        "--replay",
        metavar="FILE",
        default=quiet,
        help="play back a recording made with 'hpctop record' (--at: seconds into it)",
    )
    live = group.add_argument_group("live cluster (tables: read once; console: list and watch)")
    live.add_argument(
        "--kubeconfig", metavar="PATH", default=quiet, help="read a live cluster through this kubeconfig"
    )
    live.add_argument(
        "--context", metavar="NAME", default=quiet, help="kubeconfig context (default: current)"
    )
    return group


def _output_options(sort_help: str) -> _Parser:
    group = _Parser(add_help=False)
    opts = group.add_argument_group("output")
    opts.add_argument(
        "-o", "--output", choices=FORMATS, default="table", help="output format (default: table)"
    )
    opts.add_argument("--sort", metavar="FIELD[,FIELD]", help=sort_help)
    opts.add_argument("--no-header", action="store_true", help="leave out the header line (table and csv)")
    return group


def _sort_help(keys: Sequence[str]) -> str:
    return "sort by these fields, '-' in front for descending; fields: " + ", ".join(keys)


def _job_filters(parser: argparse.ArgumentParser) -> None:
    opts = parser.add_argument_group("filters (comma-separated lists)")
    opts.add_argument(
        "-q", "--queue", metavar="QUEUE", help="queue path, a parent queue, or a leaf queue name"
    )
    opts.add_argument("-p", "--partition", metavar="PARTITION", help="partition name")
    opts.add_argument(
        "-t",
        "--state",
        metavar="STATE",
        help="job states by name (PENDING, RUNNING) or squeue code (PD, R), or ALL",
    )
    opts.add_argument("-n", "--namespace", metavar="NAMESPACE", help="Kubernetes namespace")
    opts.add_argument("-u", "--user", metavar="USER", help="job owner")
    opts.add_argument("--me", action="store_true", help="only your jobs (the 'user' setting, default $USER)")


def _slurm_options(parser: argparse.ArgumentParser, alone: str, *, console: bool = False) -> None:
    slurm = parser.add_argument_group(f"Slurm (slurmrestd; {alone})")
    slurm.add_argument("--slurm-url", metavar="URL", help="read Slurm from the slurmrestd at this URL")
    slurm.add_argument(
        "--slurm-token-file",
        metavar="PATH",
        help="file holding the JWT (what 'scontrol token' prints; default: $SLURM_JWT)",
    )
    slurm.add_argument(
        "--slurm-token-secret",
        metavar="NS/NAME[:KEY]",
        help="read the JWT from this Kubernetes Secret (through --kubeconfig/--context; kept in memory "
        "only); KEY may be left out when the Secret holds one key",
    )
    slurm.add_argument(
        "--slurm-service",
        metavar="NS/NAME[:PORT]",
        help="reach slurmrestd through the API server's service proxy (PORT default 6820; 'auto': the "
        "Service a Slinky operator made); instead of --slurm-url",
    )
    if console:
        slurm.add_argument(
            "--slurm-poll",
            metavar="SECONDS",
            type=float,
            help="seconds between two reads of slurmrestd (default 10; it backs off on failure)",
        )
    slurm.add_argument(
        "--slurm-user",
        metavar="NAME",
        help="Slurm user name sent with the token (default: $SLURM_USER, $USER)",
    )


def build_parser(prog: str = "hpctop", only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line, for ``main`` and for the usage docs.

    ``only``: the subcommands whose options are built; every other one is named with its help line
    only (the top level's ``--help`` lists the same lines) and can never be chosen by an argument
    list that does not hold its name (:func:`_named_commands`). ``None``: all of them.
    """
    source = _source_options()
    parser = _Parser(
        prog=prog,
        parents=[source],
        description="A terminal console for GPU and HPC work on Kubernetes: squeue + sinfo + sprio + sshare "
        "+ htop.",
        epilog=f"Without a command, {prog} starts the console. "
        f"Run '{prog} COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"hpctop {__version__}")
    console = parser.add_argument_group("console")
    console.add_argument(
        "--speed", type=_speed, help="virtual seconds per real second (demo, scenario and replay)"
    )
    console.add_argument(
        "--namespace",
        metavar="NS",
        help="live cluster: show this namespace only (default: every namespace you may list)",
    )
    console.add_argument("--read-only", action="store_true", default=None, help="refuse every action")
    console.add_argument(
        "--prometheus", metavar="URL", help="live cluster: GPU metrics (DCGM) from this Prometheus"
    )
    console.add_argument(
        "--yunikorn-url", metavar="URL", help="live cluster: YuniKorn's REST API at this URL"
    )
    console.add_argument(
        "--theme", metavar="NAME", help="colour theme (remembered when picked in the console)"
    )
    console.add_argument(
        "--demo-slinky",
        action="store_true",
        help="offline: a recorded Slinky cluster (slurmd pods of a NodeSet, a slurm-bridge pod) and its "
        "recorded slurmrestd, joined in one view (read-only)",
    )
    _slurm_options(parser, "beside the console's cluster: Slurm's jobs joined into its panes", console=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, what in COMMAND_HELP.items():
        if only is not None and name not in only:
            commands.add_parser(name, help=what)  # not in the arguments: it cannot be the command
        else:
            _COMMAND_OPTIONS[name](commands.add_parser, name, what, source)
    return parser


#: every subcommand and its line in ``hpctop --help``, in that order
COMMAND_HELP = {
    "jobs": "jobs, like squeue",
    "prio": "pending jobs' priority factors, like sprio",
    "queues": "the queue tree with quotas and fair share, like sshare",
    "nodes": "nodes per partition and state, like sinfo (-N: one row per node)",
    "gpus": "GPUs per partition and model: total, allocated, free, MIG",
    "record": "save a cluster's event stream to a file, for --replay and bug reports",
    "schedule": "run hpctop as the scheduler of a live cluster: bind pods whose schedulerName is hpctop's",
    "version": "print the version",
}


def _named_commands(arguments: Sequence[str]) -> set[str]:
    """The subcommands an argument list can choose: argparse takes a subcommand only from an argument
    equal to its name (no abbreviation), so a parser built with just these options parses
    ``arguments`` exactly as the whole one does (tests/cli/test_cli_lazy.py)."""
    return {a for a in arguments if a in COMMAND_HELP}


if TYPE_CHECKING:
    AddParser = Callable[..., argparse.ArgumentParser]


def _jobs_options(add: AddParser, name: str, what: str, source: _Parser) -> None:
    jobs = add(
        name,
        parents=[source, _output_options(_sort_help(table_keys.JOB_SORT_KEYS))],
        help=what,
        description="Jobs, like squeue. Finished jobs are left out unless --all or --state asks for them.",
    )
    _job_filters(jobs)
    jobs.add_argument("-a", "--all", action="store_true", help="include finished jobs")
    jobs.add_argument(
        "--start",
        action="store_true",
        help="pending jobs only, soonest expected start first, like squeue --start",
    )
    _slurm_options(jobs, "alone, only Slurm's jobs are listed")
    jobs.set_defaults(handler=_cmd_jobs)


def _prio_options(add: AddParser, name: str, what: str, source: _Parser) -> None:
    prio = add(
        name,
        parents=[source, _output_options(_sort_help(table_keys.PRIO_SORT_KEYS))],
        help=what,
        description="Priority of pending jobs, like sprio: weighted factors and the total.",
    )
    _job_filters(prio)
    prio.add_argument("--norm", action="store_true", help="show normalised factors instead of weighted ones")
    _slurm_options(prio, "Slurm's pending jobs and their total priority, like sprio")
    prio.set_defaults(handler=_cmd_prio)


def _queues_options(add: AddParser, name: str, what: str, source: _Parser) -> None:
    queues = add(
        name,
        parents=[source, _output_options(_sort_help(table_keys.QUEUE_SORT_KEYS))],
        help=what,
        description="The queue tree, like sshare: guaranteed, used and maximum GPUs, jobs and fair share.",
    )
    opts = queues.add_argument_group("filters (comma-separated lists)")
    opts.add_argument("-q", "--queue", metavar="QUEUE", help="these queues and their subtrees")
    opts.add_argument("-t", "--state", metavar="STATE", help="queue states: " + ", ".join(QUEUE_STATES))
    _slurm_options(queues, "Slurm's associations and fair share, like sshare; -q: accounts")
    queues.add_argument(
        "--qos",
        action="store_true",
        help="with --slurm-url: Slurm's QOS (priority, preemption, limits) like 'sacctmgr show qos'; "
        "-q: QOS names",
    )
    queues.set_defaults(handler=_cmd_queues)


def _node_options(add: AddParser, name: str, what: str, source: _Parser) -> None:
    """``nodes`` and ``gpus``: sinfo's two views, the same filters."""
    keys = (
        table_keys.GPU_SORT_KEYS
        if name == "gpus"
        else tuple(sorted({*table_keys.SUMMARY_SORT_KEYS, *table_keys.NODE_SORT_KEYS}))
    )
    sub = add(
        name,
        parents=[source, _output_options(_sort_help(keys))],
        help=what,
        description=what[0].upper() + what[1:],
    )
    opts = sub.add_argument_group("filters (comma-separated lists)")
    opts.add_argument("-p", "--partition", metavar="PARTITION", help="partition name")
    opts.add_argument("-t", "--state", metavar="STATE", help="node states: " + ", ".join(NODE_STATES))
    if name == "nodes":
        sub.add_argument("-N", "--per-node", action="store_true", help="one row per node")
        _slurm_options(sub, "Slurm's nodes and partitions, like sinfo; -t: sinfo's states")
    sub.set_defaults(handler=_cmd_gpus if name == "gpus" else _cmd_nodes)


def _record_options(add: AddParser, name: str, what: str, source: _Parser) -> None:
    record = add(
        name,
        parents=[source],
        help=what,
        description="Save the raw watch events of a live cluster (or the simulator with --demo or "
        "--scenario) as gzip JSON lines. Stop with Ctrl-C or --duration; the file stays valid.",
    )
    record.add_argument("file", metavar="FILE", help="where to write the recording (gzip JSON lines)")
    record.add_argument(
        "--namespace", metavar="NS", help="live cluster: record this namespace only (default: all)"
    )
    record.add_argument(
        "--duration",
        metavar="SECONDS",
        type=_seconds,
        help="stop after this long (live: real seconds; simulator: virtual seconds, default 600 or --at)",
    )
    record.set_defaults(handler=_cmd_record)


def _schedule_options(add: AddParser, name: str, what: str, source: _Parser) -> None:
    schedule = add(
        name,
        help=what,
        description="Watch a live cluster and bind the pending pods whose spec.schedulerName is "
        "--scheduler-name, whole gangs or nothing, with hpctop's scheduling core (queues, fair share, "
        "priority, backfill). One instance binds at a time (a Lease); the others stand by. "
        "See docs/scheduler.md.",
    )
    quiet = argparse.SUPPRESS
    target = schedule.add_argument_group("cluster")
    target.add_argument(
        "--kubeconfig", metavar="PATH", default=quiet, help="kubeconfig (default: $KUBECONFIG, in-cluster)"
    )
    target.add_argument("--context", metavar="NAME", default=quiet, help="kubeconfig context")
    target.add_argument(
        "--namespace",
        metavar="NS",
        default=quiet,
        help="bind this namespace's pods only (all pods are still watched; default: every namespace)",
    )
    target.add_argument("--config", metavar="PATH", default=quiet, help="config file (default: XDG location)")
    target.add_argument(
        "--read-only", action="store_true", default=quiet, help="read-only mode: refuses to start schedule"
    )
    run = schedule.add_argument_group("scheduling")
    run.add_argument(
        "--scheduler-name",
        metavar="NAME",
        default="hpctop",
        help="bind only pods with this spec.schedulerName (default: hpctop)",
    )
    run.add_argument(
        "--interval",
        metavar="SECONDS",
        type=_speed,
        default=5.0,
        help="seconds between scheduling cycles (default: 5)",
    )
    run.add_argument("--once", action="store_true", help="run one cycle and exit")
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="print the decisions; bind nothing, post no Events, take no lease",
    )
    elect = schedule.add_argument_group("leader election")
    elect.add_argument(
        "--lease-namespace",
        metavar="NS",
        help="namespace of the Lease (default: the context's namespace, else default)",
    )
    elect.add_argument(
        "--lease-name",
        metavar="NAME",
        default="hpctop-scheduler",
        help="Lease name (default: hpctop-scheduler)",
    )
    elect.add_argument(
        "--identity", metavar="ID", help="this instance's holder identity (default: hostname_random)"
    )
    schedule.set_defaults(handler=_cmd_schedule)


def _version_options(add: AddParser, name: str, what: str, source: _Parser) -> None:
    add(name, help=what).set_defaults(handler=_cmd_version)


#: the function that builds each subcommand's options (:func:`build_parser`)
_COMMAND_OPTIONS: dict[str, Callable[[AddParser, str, str, _Parser], None]] = {
    "jobs": _jobs_options,
    "prio": _prio_options,
    "queues": _queues_options,
    "nodes": _node_options,
    "gpus": _node_options,
    "record": _record_options,
    "schedule": _schedule_options,
    "version": _version_options,
}


# -- settings and session ----------------------------------------------------------------------


def _settings(args: argparse.Namespace) -> Settings:
    from hpctop.config import load_settings  # pydantic: not for --help and version

    overrides = {
        "seed": getattr(args, "seed", None),
        "speed": getattr(args, "speed", None),
        "read_only": getattr(args, "read_only", None),
        "theme": getattr(args, "theme", None),
    }
    return load_settings(getattr(args, "config", None), overrides)


def _session_module() -> ModuleType:
    # Imported when a command needs a cluster, so ``hpctop version`` and ``--help`` stay instant.
    from hpctop.runtime import session

    return session


def open_session(args: argparse.Namespace, settings: Settings) -> SessionLike:
    """The demo cluster, or a scenario's, advanced to ``--at``."""
    from pathlib import Path

    from hpctop.tables.select import split_list

    scenario = getattr(args, "scenario", None)
    if scenario is not None and getattr(args, "demo", False):
        raise UsageError("--demo and --scenario cannot be used together")
    kubeconfig = getattr(args, "kubeconfig", None) or (
        str(settings.kubeconfig) if settings.kubeconfig else None
    )
    context = getattr(args, "context", None) or settings.context
    live = _is_live(args)
    replay = getattr(args, "replay", None)
    if replay is not None:
        if live or scenario is not None or getattr(args, "demo", False):
            raise UsageError("--replay cannot be combined with --demo, --scenario or --kubeconfig/--context")
        from hpctop.runtime.recording import ReplaySession

        replay_session = ReplaySession(Path(replay).expanduser(), speed=getattr(args, "speed", None) or 1.0)
        replay_session.advance_to_elapsed(float(getattr(args, "at", 0.0)))
        if replay_session.skipped_lines:
            _warn(
                f"hpctop: note: {replay_session.skipped_lines} line(s) of the recording skipped "
                "(cut off or malformed)"
            )
        return replay_session
    if live:
        if scenario is not None or getattr(args, "demo", False):
            raise UsageError("--kubeconfig/--context cannot be combined with --demo or --scenario")
        from hpctop.runtime.cluster_view import read_cluster

        namespaces = split_list(getattr(args, "namespace", None))
        view = read_cluster(
            kubeconfig,
            context,
            namespaces[0] if len(namespaces) == 1 else settings.namespace,
            request_timeout=settings.request_timeout,
        )
        for note in view.notes:
            _warn(f"hpctop: note: {note}")
        return view
    at = float(getattr(args, "at", 0.0))
    # on a terminal the session starts at 0 and catches up saying how far it is; elsewhere the
    # factory advances it (the same run either way: tests/cli/test_cli_catch_up.py)
    first_at = 0.0 if at > 0 and sys.stderr.isatty() else at
    # only a non-default GPU API is passed on: the sessions' other callers never name one
    gpu_api: dict[str, str] = {"gpu_api": args.gpu_api} if getattr(args, "gpu_api", None) == "dra" else {}
    module = _session_module()
    session: SessionLike
    if scenario is not None:
        path = Path(scenario).expanduser()
        if not path.is_file():
            raise UsageError(f"scenario file not found: {path}")
        # A scenario file may name its own seed; only a seed the user set (flag, env, config) beats it.
        seed = settings.seed if "seed" in settings.model_fields_set else None
        try:
            session = module.scenario_session(
                path, seed=seed, at=first_at, read_only=settings.read_only, **gpu_api
            )
        except OSError as exc:
            raise UsageError(f"cannot read scenario {path}: {exc.strerror or exc}") from None
    else:
        style = getattr(args, "scheduler", "hpctop")
        styled = {} if style == "hpctop" else {"scheduler_style": style}  # the default call unchanged
        session = module.demo_session(
            seed=settings.seed, at=first_at, read_only=settings.read_only, **styled, **gpu_api
        )
    if first_at != at:
        _catch_up(session, at)
    session.speed = settings.speed
    return session


#: how often the catch-up line is rewritten (seconds of wall time)
_PROGRESS_EVERY_S = 0.25
#: the catch-up runs in this many stretches at most (each ends on a scheduling point)
_CATCH_UP_STRETCHES = 200


def _catch_up(session: Any, at: float, stream: TextIO | None = None) -> None:
    """Run the simulation to ``at`` virtual seconds, saying how far it is on a terminal.

    Why: ``hpctop --demo --at 7200`` spent ~90 s simulating before the console (or the table)
    could show anything, on a silent terminal. The run is cut into stretches that each end on a
    scheduling point (a multiple of the session's interval), so it is the same run as one
    ``advance_to_elapsed(at)``: the loop visits the same points and the clock the same instants
    (tests/cli/test_cli_catch_up.py checks the answer is the same bytes). The line counts virtual
    seconds, the only progress the simulation knows (a busy hour takes longer than a quiet one).
    """
    if at <= 0:
        return
    out = sys.stderr if stream is None else stream
    shown = out.isatty()
    interval = float(getattr(session, "interval", 0.0) or 0.0)
    if not shown or interval <= 0:
        session.advance_to_elapsed(at)
        return
    import math
    import time

    stretch = interval * max(1, math.ceil(at / _CATCH_UP_STRETCHES / interval))
    said = 0.0
    reached = 0.0
    try:
        while reached < at:
            reached = min(reached + stretch, at)
            session.advance_to_elapsed(reached)
            now = time.monotonic()
            if now - said >= _PROGRESS_EVERY_S or reached >= at:
                said = now
                percent = 100 * reached / at
                out.write(f"\rhpctop: simulating to t={at:,.0f} s… t={reached:,.0f} s ({percent:.0f} %) ")
                out.flush()
    finally:
        out.write("\n")
        out.flush()


def _is_live(args: argparse.Namespace) -> bool:
    return getattr(args, "kubeconfig", None) is not None or getattr(args, "context", None) is not None


def _live_target(args: argparse.Namespace, settings: Settings) -> tuple[str | None, str | None, str | None]:
    """(kubeconfig, context, namespace) from the flags, else the settings."""
    kubeconfig = getattr(args, "kubeconfig", None) or (
        str(settings.kubeconfig) if settings.kubeconfig else None
    )
    context = getattr(args, "context", None) or settings.context
    namespace = getattr(args, "namespace", None) or settings.namespace
    return kubeconfig, context, namespace


# -- commands ----------------------------------------------------------------------------------


def _emit(
    out: TextIO,
    rows: Sequence[Row],
    columns: Sequence[Column],
    args: argparse.Namespace,
    csv_keys: Sequence[str],
) -> None:
    from hpctop.tables.render import render

    out.write(render(rows, columns, args.output, header=not args.no_header, csv_first=csv_keys))


def _users(args: argparse.Namespace, settings: Settings) -> list[str]:
    from hpctop.tables.select import split_list

    users = split_list(args.user)
    if args.me:
        if not settings.user:
            raise UsageError("--me needs your user name: set HPCTOP_USER or 'user' in the config file")
        users.append(settings.user)
    return users


def _has_cluster_source(args: argparse.Namespace) -> bool:
    """Whether a Kubernetes or simulated cluster was asked for (the demo is only the default)."""
    named = ("demo", "scenario", "replay", "kubeconfig", "context")
    return any(getattr(args, name, None) not in (None, False) for name in named)


def _slurm_client(args: argparse.Namespace, settings: Settings) -> SlurmRest:
    """The slurmrestd client ``--slurm-url`` names, with its token and user (read-only)."""
    import getpass

    from hpctop.sources.slurm.rest import SlurmRest, token_from

    if args.slurm_token_secret and args.slurm_token_file:
        raise UsageError("--slurm-token-file and --slurm-token-secret cannot be used together")
    if args.slurm_token_secret:
        from hpctop.sources.slurm.secret import token_from_secret

        kubeconfig, context, _ = _live_target(args, settings)
        token: str | None = token_from_secret(
            args.slurm_token_secret, kubeconfig=kubeconfig, context=context, timeout=settings.request_timeout
        )
    else:
        try:
            token = token_from(token_file=args.slurm_token_file)
        except OSError as exc:
            raise UsageError(
                f"cannot read the Slurm token file {args.slurm_token_file}: {exc.strerror or exc}"
            ) from None
    user = args.slurm_user or os.environ.get("SLURM_USER") or getpass.getuser()
    if args.slurm_service:
        from hpctop.sources.slurm.secret import proxy_target

        kubeconfig, context, _ = _live_target(args, settings)
        server, base_path, opener = proxy_target(args.slurm_service, kubeconfig=kubeconfig, context=context)
        return SlurmRest(
            server,
            user=user,
            token=token,
            timeout=settings.request_timeout,
            opener=opener,
            base_path=base_path,
        )
    return SlurmRest(args.slurm_url, user=user, token=token, timeout=settings.request_timeout)


def _slurm_read(read: Callable[[], T]) -> T:
    """One slurmrestd read; its failure is one plain line (the caller decides whether it is fatal)."""
    from hpctop.sources.slurm.rest import SlurmError

    try:
        return read()
    except SlurmError as exc:
        raise HpctopError(f"Slurm: {exc}") from None


def _slurm_skipped(client: SlurmRest) -> None:
    for kind, count in sorted(client.skipped.items()):
        _warn(f"hpctop: note: {count} malformed Slurm {kind} entr{'y' if count == 1 else 'ies'} skipped")


def _slurm_asked(args: argparse.Namespace) -> bool:
    """Whether Slurm was asked for: ``--slurm-url`` or ``--slurm-service``."""
    if getattr(args, "slurm_url", None) and getattr(args, "slurm_service", None):
        raise UsageError("--slurm-url and --slurm-service cannot be used together")
    return bool(getattr(args, "slurm_url", None) or getattr(args, "slurm_service", None))


def _slurm_alone(args: argparse.Namespace, command: str) -> bool:
    """Whether ``--slurm-url`` asks for Slurm's own table; beside a cluster source it is refused."""
    if not _slurm_asked(args):
        return False
    simulated = any(getattr(args, name, None) not in (None, False) for name in ("demo", "scenario", "replay"))
    kube_for_slurm = args.slurm_token_secret or args.slurm_service  # a kubeconfig may serve Slurm's access
    if simulated or (_is_live(args) and not kube_for_slurm):
        raise UsageError(f"'{command} --slurm-url' shows Slurm's own table: leave out the cluster source")
    return True


def _slurm_jobs(args: argparse.Namespace, settings: Settings) -> list[SlurmJob]:
    """The Slurm jobs from ``--slurm-url``; an unreachable or refusing server raises."""
    client = _slurm_client(args, settings)
    jobs = _slurm_read(client.jobs)
    _slurm_skipped(client)
    return jobs


def _by_expected_start(rows: list[Row]) -> list[Row]:
    """squeue --start's order: the soonest expected start first, jobs without one last."""
    return sorted(rows, key=lambda row: (row["eta"] is None, row["eta"] or ""))


def _cmd_jobs(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from hpctop.tables import jobs as jobs_table
    from hpctop.tables.select import parse_job_states, sort_rows, split_list

    states = parse_job_states(args.state)
    sort_rows([], args.sort, jobs_table.SORT_KEYS)  # a bad field fails before the cluster is built
    filters = jobs_table.JobFilters.of(
        states=states,
        include_finished=args.all,
        queues=split_list(args.queue),
        partitions=split_list(args.partition),
        namespaces=split_list(args.namespace),
        users=_users(args, settings),
        pending_only=args.start,
    )
    rows: list[Row] = []
    slurm_alone = _slurm_asked(args) and not _has_cluster_source(args)
    if not slurm_alone:
        session = open_session(args, settings)
        chosen = jobs_table.select_jobs(
            session.snapshot, session.result, filters, default_queue=session.policy.default_queue
        )
        rows = [row for _, _, row in chosen]
    if _slurm_asked(args):
        try:
            slurm_jobs = _slurm_jobs(args, settings)
        except HpctopError as exc:
            if slurm_alone:
                raise
            _warn(f"hpctop: note: Slurm jobs left out: {exc}")  # only the Slurm rows degrade
        else:
            if not slurm_alone:  # a slurm-bridge pod's Kubernetes job is its Slurm job's row
                from hpctop.runtime.slurm_join import bridged_rows

                joined = bridged_rows(session.snapshot.jobs, session.snapshot.pods, slurm_jobs)
                rows = [row for job, _, row in chosen if job.key not in joined]
            import time

            rows += jobs_table.slurm_job_rows(slurm_jobs, time.time(), filters)
    if args.start:
        rows = _by_expected_start(rows)
    rows = sort_rows(rows, args.sort, jobs_table.SORT_KEYS)
    _emit(out, rows, jobs_table.COLUMNS, args, jobs_table.CSV_KEYS)
    return 0


_PRIO_ALIASES = {f: f"weighted.{f}" for f in table_keys.PRIO_FACTORS if f != "partition"}


def _cmd_prio(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from hpctop.tables import prio as prio_table
    from hpctop.tables.select import parse_job_states, sort_rows, split_list

    if _slurm_alone(args, "prio"):
        return _slurm_prio(args, settings, out)
    states = parse_job_states(args.state)
    sort_rows([], args.sort, prio_table.SORT_KEYS, _PRIO_ALIASES)
    session = open_session(args, settings)
    rows = prio_table.prio_rows(
        session.snapshot,
        session.result,
        states=states,
        queues=split_list(args.queue),
        partitions=split_list(args.partition),
        namespaces=split_list(args.namespace),
        users=_users(args, settings),
        default_queue=session.policy.default_queue,
    )
    rows = sort_rows(rows, args.sort, prio_table.SORT_KEYS, _PRIO_ALIASES)
    columns = prio_table.NORM_COLUMNS if args.norm else prio_table.COLUMNS
    _emit(out, rows, columns, args, prio_table.CSV_KEYS)
    return 0


def _cmd_queues(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from hpctop.tables import queues as queues_table
    from hpctop.tables.select import parse_choices, sort_rows, split_list

    if _slurm_alone(args, "queues"):
        return _slurm_queues(args, settings, out)
    if args.qos:
        raise UsageError("'queues --qos' lists Slurm's QOS: it needs --slurm-url or --slurm-service")
    states = parse_choices(args.state, QUEUE_STATES, "queue state")
    sort_rows([], args.sort, queues_table.SORT_KEYS)
    session = open_session(args, settings)
    rows = queues_table.queue_rows(session.result, queues=split_list(args.queue), states=states)
    rows = sort_rows(rows, args.sort, queues_table.SORT_KEYS)
    _emit(out, rows, queues_table.COLUMNS, args, queues_table.CSV_KEYS)
    return 0


def _cmd_nodes(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from hpctop.tables import nodes as nodes_table
    from hpctop.tables.select import NODE_STATE_ALIASES, parse_choices, sort_rows, split_list

    if _slurm_alone(args, "nodes"):
        return _slurm_nodes(args, settings, out)
    states = parse_choices(args.state, NODE_STATES, "node state", NODE_STATE_ALIASES)
    keys = nodes_table.NODE_SORT_KEYS if args.per_node else nodes_table.SUMMARY_SORT_KEYS
    sort_rows([], args.sort, keys)
    session = open_session(args, settings)
    partitions = split_list(args.partition)
    if args.per_node:
        rows = nodes_table.node_rows(session.snapshot, session.result, partitions=partitions, states=states)
        rows = sort_rows(rows, args.sort, nodes_table.NODE_SORT_KEYS)
        _emit(out, rows, nodes_table.NODE_COLUMNS, args, nodes_table.NODE_CSV_KEYS)
    else:
        rows = nodes_table.summary_rows(
            session.snapshot, session.result, partitions=partitions, states=states
        )
        rows = sort_rows(rows, args.sort, nodes_table.SUMMARY_SORT_KEYS)
        _emit(out, rows, nodes_table.SUMMARY_COLUMNS, args, nodes_table.SUMMARY_CSV_KEYS)
    return 0


def _slurm_prio(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """``prio --slurm-url``: sprio's pending jobs and Slurm's total (slurmrestd serves no factors)."""
    from hpctop.tables import slurm as slurm_table
    from hpctop.tables.select import sort_rows, split_list

    if args.state or args.namespace:
        raise UsageError("'prio --slurm-url' lists pending jobs in no namespace: -t and -n do not apply")
    sort_rows([], args.sort, slurm_table.PRIO_CSV_KEYS)
    client = _slurm_client(args, settings)
    jobs = _slurm_read(client.jobs)
    rows = slurm_table.prio_rows(
        jobs,
        partitions=split_list(args.partition),
        users=_users(args, settings),
        accounts=split_list(args.queue),
        qos_factors=_slurm_qos_factors(client),
    )
    _slurm_skipped(client)
    rows = sort_rows(rows, args.sort, slurm_table.PRIO_CSV_KEYS)
    _emit(out, rows, slurm_table.PRIO_COLUMNS, args, slurm_table.PRIO_CSV_KEYS)
    return 0


def _slurm_qos_factors(client: SlurmRest) -> dict[str, float] | None:
    """The QOS factors when slurmrestd serves slurmdbd's QOS; None (the column stays empty) when not."""
    from hpctop.sources.slurm.rest import SlurmError
    from hpctop.tables import slurm as slurm_table

    try:
        if client.db_path("qos") is None:
            return None
        return slurm_table.qos_factors(client.qos())
    except SlurmError as exc:
        _warn(f"hpctop: note: no QOS factors: {exc}")
        return None


def _slurm_queues(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """``queues --slurm-url``: sshare's associations (slurmrestd v0.0.40+ with slurmdbd)."""
    from hpctop.tables import slurm as slurm_table
    from hpctop.tables.select import sort_rows, split_list

    if args.state:
        raise UsageError("'queues --slurm-url' has no queue states: -t does not apply")
    if args.qos:
        return _slurm_qos(args, settings, out)
    sort_rows([], args.sort, slurm_table.SHARE_CSV_KEYS)
    client = _slurm_client(args, settings)
    shares = _slurm_read(client.shares)
    _slurm_skipped(client)
    if note := slurm_table.shares_note(shares):
        _warn(f"hpctop: note: {note}")
    rows = slurm_table.share_rows(shares, accounts=split_list(args.queue))
    rows = sort_rows(rows, args.sort, slurm_table.SHARE_CSV_KEYS)
    _emit(out, rows, slurm_table.SHARE_COLUMNS, args, slurm_table.SHARE_CSV_KEYS)
    return 0


def _slurm_qos(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """``queues --qos --slurm-url``: slurmdbd's QOS through slurmrestd, like ``sacctmgr show qos``."""
    from hpctop.tables import slurm as slurm_table
    from hpctop.tables.select import sort_rows, split_list

    sort_rows([], args.sort, slurm_table.QOS_CSV_KEYS)
    client = _slurm_client(args, settings)
    qos = _slurm_read(client.qos)
    _slurm_skipped(client)
    rows = slurm_table.qos_rows(qos, names=split_list(args.queue))
    rows = sort_rows(rows, args.sort, slurm_table.QOS_CSV_KEYS)
    _emit(out, rows, slurm_table.QOS_COLUMNS, args, slurm_table.QOS_CSV_KEYS)
    return 0


def _slurm_nodes(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """``nodes --slurm-url``: sinfo's partition summary, or ``-N`` one row per node and partition."""
    from hpctop.tables import slurm as slurm_table
    from hpctop.tables.select import sort_rows, split_list

    keys = slurm_table.NODE_CSV_KEYS if args.per_node else slurm_table.SUMMARY_CSV_KEYS
    sort_rows([], args.sort, keys)
    client = _slurm_client(args, settings)
    nodes = _slurm_read(client.nodes)
    partitions = _slurm_read(client.partitions)
    _slurm_skipped(client)
    wanted = {"wanted_partitions": split_list(args.partition), "states": split_list(args.state)}
    columns: Sequence[Column]
    if args.per_node:
        rows = slurm_table.node_rows(nodes, partitions, **wanted)
        columns = slurm_table.NODE_COLUMNS
    else:
        rows = slurm_table.summary_rows(nodes, partitions, **wanted)
        columns = slurm_table.SUMMARY_COLUMNS
    _emit(out, sort_rows(rows, args.sort, keys), columns, args, keys)
    return 0


def _cmd_gpus(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from hpctop.tables import nodes as nodes_table
    from hpctop.tables.select import NODE_STATE_ALIASES, parse_choices, sort_rows, split_list

    states = parse_choices(args.state, NODE_STATES, "node state", NODE_STATE_ALIASES)
    sort_rows([], args.sort, nodes_table.GPU_SORT_KEYS)
    session = open_session(args, settings)
    rows = nodes_table.gpu_rows(
        session.snapshot, session.result, partitions=split_list(args.partition), states=states
    )
    rows = sort_rows(rows, args.sort, nodes_table.GPU_SORT_KEYS)
    _emit(out, rows, nodes_table.GPU_COLUMNS, args, nodes_table.GPU_CSV_KEYS)
    return 0


def _cmd_version(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    out.write(f"hpctop {__version__}\n")
    return 0


def _load_make_app() -> Callable[..., HpctopApp]:
    # Imported here, not at the top: the tables must not pay for (or depend on) Textual.
    from hpctop.tui.app import make_app

    return make_app


def _run_console(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """The console: connect (or build the simulated cluster), then run it until it ends.

    Everything before the UI can take a while (an exec credential plugin, the demo's first hour),
    so it says what it is doing on stderr, and ctrl+c there is one line and status 130, not a
    traceback. Once the UI runs, :func:`hpctop.tui.terminal.run_console` owns the terminal and the
    exit status (signals, a lost terminal, a fatal error)."""
    live = None
    try:
        if _is_live(args) and getattr(args, "replay", None) is None:
            if getattr(args, "scenario", None) is not None or getattr(args, "demo", False):
                raise UsageError("--kubeconfig/--context cannot be combined with --demo or --scenario")
            target = getattr(args, "context", None) or "the current context"
            print(f"hpctop: connecting to {target} (ctrl+c to give up)…", file=sys.stderr, flush=True)
            live = _connect_console(args, settings)
        if getattr(args, "demo_slinky", False):
            session, read_only = _slinky_demo(args), True
        else:
            session = live if live is not None else open_session(args, settings)
            read_only = live.read_only if live is not None else settings.read_only
        if _slurm_asked(args):
            session = _with_slurm(session, args, settings, read_only=read_only)
        from hpctop.tui.terminal import run_console

        app = _load_make_app()(
            session,
            theme=settings.theme,
            read_only=read_only,
            keymap=settings.keymap or None,
            user=settings.user or None,
            tick_interval=settings.refresh_interval,
        )
    except KeyboardInterrupt:
        if live is not None:
            live.close()
        print("hpctop: interrupted before the console started", file=sys.stderr)
        return 130
    try:
        status = run_console(app)
    finally:
        if live is not None:
            live.close()  # cancels the reflectors and closes their streams (within a second)
    if status == 0:
        _remember_theme(app.theme, settings, getattr(args, "config", None))
    return status


def _slinky_demo(args: argparse.Namespace) -> Any:
    """The recorded Slinky demo (:mod:`hpctop.runtime.slinky_demo`); it stands alone."""
    if (
        _slurm_asked(args)
        or _is_live(args)
        or getattr(args, "demo", False)
        or getattr(args, "scenario", None)
    ):
        raise UsageError("--demo-slinky brings its own cluster and slurmrestd: leave out the other sources")
    from hpctop.runtime.slinky_demo import slinky_demo_session

    return slinky_demo_session()


def _with_slurm(session: Any, args: argparse.Namespace, settings: Settings, *, read_only: bool) -> Any:
    """``session`` with slurmrestd's jobs joined in (:mod:`hpctop.runtime.slurm_console`): polled
    every ``slurm_poll_interval`` seconds, acted on through slurmrestd, read-only as the console is."""
    from hpctop.actions.audit import AuditLog
    from hpctop.backends.slurm.act import SlurmActions
    from hpctop.runtime.slurm_console import SlurmConsoleSession
    from hpctop.sources.slurm.poll import DEFAULT_INTERVAL, SlurmPoller

    client = _slurm_client(args, settings)
    client.read_only = read_only  # the console's decision, enforced at the client's one chokepoint
    audit = getattr(session, "audit", None)
    actions = SlurmActions(client, audit=audit if isinstance(audit, AuditLog) else AuditLog())
    interval = float(getattr(args, "slurm_poll", None) or DEFAULT_INTERVAL)
    return SlurmConsoleSession(session, SlurmPoller(client, interval=interval), actions)


#: the table commands whose answer on a simulated cluster is deterministic, hence cacheable
_CACHED_COMMANDS = frozenset({"jobs", "prio", "queues", "nodes", "gpus"})


def _cache_request(args: argparse.Namespace, settings: Settings) -> dict[str, object] | None:
    """What a table's answer depends on, when it may come from the cache (else None).

    Only the simulated clusters are deterministic: a live cluster or a replay is never cached. The
    request holds every argument and every setting (config file, environment) and a scenario
    file's content, so anything that could change the answer changes the key.
    """
    from pathlib import Path

    if args.command not in _CACHED_COMMANDS or getattr(args, "no_cache", False):
        return None
    if _is_live(args) or getattr(args, "replay", None) is not None:
        return None
    if _slurm_asked(args):  # a live slurmrestd is never cached
        return None
    from hpctop.tables import cache

    if cache.disabled():
        return None
    request: dict[str, object] = {
        "args": {k: v for k, v in sorted(vars(args).items()) if k not in ("handler", "no_cache")},
        "settings": settings.model_dump(mode="json"),
    }
    scenario = getattr(args, "scenario", None)
    if scenario is not None:
        import hashlib

        try:
            request["scenario_sha256"] = hashlib.sha256(Path(scenario).expanduser().read_bytes()).hexdigest()
        except OSError:
            return None  # the command itself says what is wrong with the file
    return request


def _answer(
    handler: Callable[[argparse.Namespace, Settings, TextIO], int],
    args: argparse.Namespace,
    settings: Settings,
    out: TextIO,
) -> int:
    """Run a command; a table of a simulated cluster is read from (or kept in) the answer cache."""
    import io

    request = _cache_request(args, settings)
    if request is None:
        return handler(args, settings, out)
    from hpctop.tables import cache

    key = cache.make_key(request)
    answer = cache.load(key)
    if answer is None:
        buffer = io.StringIO()
        code = handler(args, settings, buffer)
        answer = buffer.getvalue()
        if code != 0:
            out.write(answer)
            return code
        cache.store(key, answer)
    out.write(answer)
    return 0


def _read_only_flag(args: argparse.Namespace) -> bool | None:
    """True when ``--read-only`` was given, else None (no flag turns writes on)."""
    return True if getattr(args, "read_only", None) is True else None


def _connect_console(args: argparse.Namespace, settings: Settings) -> LiveConsoleSession:
    """The live console's session, read-only as R3 says: the flag, else the context's own
    ``read_only``, else the global one (:func:`hpctop.config.read_only_for`).

    Connects before Textual starts: an exec credential plugin may prompt on this terminal. When
    no context is named and some context has its own setting, which context is current is only
    known once the kubeconfig is loaded, so the first connection is read-only (fail closed); it is
    replaced by a writable one, pinned to that context, only if the resolution allows writes.
    """
    from hpctop.config import read_only_for
    from hpctop.runtime.live_console import LiveConsoleSession

    kubeconfig, context, namespace = _live_target(args, settings)
    flag = _read_only_flag(args)

    def connect(name: str | None, read_only: bool) -> LiveConsoleSession:
        return LiveConsoleSession.connect(
            kubeconfig,
            name,
            namespace,
            read_only=read_only,
            prometheus_url=getattr(args, "prometheus", None),
            yunikorn_url=getattr(args, "yunikorn_url", None),
        )

    if context is not None or flag is not None or not settings.contexts:
        return connect(context, read_only_for(settings, context, flag))
    live = connect(None, True)
    current = live.connection_settings.context or None
    if read_only_for(settings, current, None):
        return live
    live.close()
    return connect(current, False)


def _cmd_record(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from pathlib import Path

    from hpctop.runtime import recording

    path = Path(args.file).expanduser()
    if getattr(args, "replay", None) is not None:
        raise UsageError("record saves a cluster; --replay cannot be its source")
    scenario = getattr(args, "scenario", None)
    simulated = scenario is not None or getattr(args, "demo", False)
    if simulated and _is_live(args):
        raise UsageError("--kubeconfig/--context cannot be combined with --demo or --scenario")
    if simulated:
        if scenario is not None and getattr(args, "demo", False):
            raise UsageError("--demo and --scenario cannot be used together")
        until = getattr(args, "at", None) or args.duration or 600.0
        if scenario is not None:
            from hpctop.sources.scenario import load_scenario

            scenario_path = Path(scenario).expanduser()
            if not scenario_path.is_file():
                raise UsageError(f"scenario file not found: {scenario_path}")
            loaded = load_scenario(scenario_path)
            explicit = settings.seed if "seed" in settings.model_fields_set else None
            seed = explicit if explicit is not None else (loaded.seed if loaded.seed is not None else 1)
            source = f"scenario:{scenario_path.name}"
        else:
            from hpctop.sources.simulator.trace import openb_scenario

            seed = settings.seed
            loaded, source = openb_scenario(seed), "demo"
        gpu_api = "dra" if getattr(args, "gpu_api", None) == "dra" else "device-plugin"
        stats, _ = recording.record_simulation(
            path, loaded, seed=seed, source_name=source, until=until, gpu_api=gpu_api
        )
        what = f"{until:g} virtual seconds of {source} (seed {seed})"
    else:
        kubeconfig, context, namespace = _live_target(args, settings)
        _warn("hpctop: recording; stop with Ctrl-C")
        stats = recording.record_live(path, kubeconfig, context, namespace, duration=args.duration)
        what = f"{stats.seconds:.0f}s of {'context ' + context if context else 'the current context'}"
    _warn(
        f"hpctop: recorded {stats.events} events ({stats.bytes / 1024:.0f} KiB before compression), "
        f"{what}, to {path}"
    )
    return 0


def _cmd_schedule(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """``hpctop schedule``: refused in read-only mode, else the headless scheduler until Ctrl-C."""
    from hpctop.sanitize import sanitize_line

    kubeconfig, context, namespace = _live_target(args, settings)
    if context is None and any(c.read_only for c in settings.contexts.values()):
        raise UsageError(
            "some contexts are read-only in the config ([contexts.NAME] read_only = true), and the "
            "current context is only known once connected: name the context with --context"
        )
    from hpctop.config import read_only_for

    if read_only_for(settings, context, _read_only_flag(args)):
        raise UsageError(
            "schedule binds pods, deletes the members of a gang that cannot be completed and writes "
            "Events and a Lease: it cannot run in read-only mode (--read-only, read_only in the "
            "config, or the context's own read_only); drop read-only to run it"
        )
    import asyncio

    from hpctop.runtime.scheduler import SchedulerOptions, run_schedule

    options = SchedulerOptions(
        scheduler_name=args.scheduler_name,
        interval=args.interval,
        dry_run=args.dry_run,
        namespace=namespace,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        identity=args.identity or "",
    )

    def log(line: str) -> None:
        out.write(sanitize_line(line) + "\n")  # pod names and server messages: cluster text
        out.flush()

    try:
        asyncio.run(run_schedule(kubeconfig, context, options, once=args.once, log=log))
    except KeyboardInterrupt:  # the lease is released on the way out
        return 130
    return 0


def _remember_theme(chosen: object, settings: Settings, config: str | None) -> None:
    """Keep the theme picked in the console for the next start (not a one-off ``--theme``)."""
    if not isinstance(chosen, str) or not chosen or chosen == settings.theme:
        return
    from hpctop.config import save_theme

    try:
        save_theme(chosen, config)
    except HpctopError as exc:  # a read-only home must not turn a clean exit into a failure
        _warn(f"hpctop: could not remember the theme: {exc}")


def _join_sort_values(argv: Sequence[str]) -> list[str]:
    """``--sort -priority`` → ``--sort=-priority``: argparse would take ``-priority`` for an option."""
    out: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "--sort":
            value = next(it, None)
            out.append(arg if value is None else f"--sort={value}")
        else:
            out.append(arg)
    return out


def _exit_without_teardown(status: int) -> NoReturn:
    """End the process now that the console or the table has finished, without freeing its heap.

    Why (issue 16, Q1): the console of a 100k-pod cluster gave the terminal back within 0.6 s of
    ``q`` but the process took 2.2 s more to end (4-7 s at 200k): the interpreter's teardown
    frees the store, the view and the rows one object at a time, and ``hpctop jobs`` pays the same
    after its last line. By the time this runs the terminal is restored (``run_console``'s own
    ``finally``), the reflectors are closed, the theme is remembered, the audit and fault logs
    write whole records per call (``os.write`` on their own descriptors) and the answer cache
    writes atomically; what is left is flushed here: the ``atexit`` handlers (``logging``'s
    flush and close among them) and the standard streams. Only the real process takes this way
    out (``main()`` without ``argv``); a caller in the same process gets the status back.
    """
    import atexit
    import contextlib

    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run hpctop with ``argv`` (default: the process's arguments); return the exit status."""
    prog = _prog()
    arguments = _join_sort_values(sys.argv[1:] if argv is None else argv)
    try:
        try:
            # only the named subcommands' options: ``--help`` and ``version`` build no others (S1)
            args = build_parser(prog, only=_named_commands(arguments)).parse_args(arguments)
        except SystemExit as done:  # --help and --version print and exit 0
            return done.code if isinstance(done.code, int) else 0
        if getattr(args, "command", None) == "version":  # no settings, no logging: answers at once
            sys.stdout.write(f"hpctop {__version__}\n")
            return 0
        _sanitize_log_output()  # before anything that may log; --help and usage errors log nothing
        settings = _settings(args)
        handler: Callable[[argparse.Namespace, Settings, TextIO], int] = getattr(
            args, "handler", _run_console
        )
        status = _answer(handler, args, settings, sys.stdout)
        if argv is None and (handler is _run_console or getattr(args, "command", None) in _CACHED_COMMANDS):
            _exit_without_teardown(status)
        return status
    except HpctopError as exc:
        _warn(f"{prog}: {exc}")  # one line; a server's message is cluster text
        return exc.exit_code
    except BrokenPipeError:  # `hpctop jobs | head`: the reader left; not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
