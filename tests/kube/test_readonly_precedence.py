"""R3 on a live cluster: which context the console is really on decides its read-only mode, and
nothing turns writes on once it runs.

The console is connected through ``hpctop.cli`` (the flags and config a user gives) to the
FakeApiServer over HTTP. The kubeconfig's current context is ``fake``; ``other`` is a second one.
Read-only is checked where it is enforced: the transport refuses a mutating request before any
I/O, so a read-only session's client must refuse, and a writable one's must not.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hpctop import cli
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.transport import ReadOnlyViolation
from hpctop.tui.app import make_app
from tests.kube.fakeserver import JOBS, FakeApiServer
from tests.model_fixtures import batch_job


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hpctop.toml"
    path.write_text(text)
    return path


async def connect(*argv: str) -> LiveConsoleSession:
    args = cli.build_parser().parse_args(list(argv))
    settings = cli._settings(args)
    return await asyncio.to_thread(cli._connect_console, args, settings)


async def writes_allowed(session: LiveConsoleSession) -> bool:
    """Whether the session's own client would send a write (a dry run of a hold, which changes nothing)."""
    request = ActionRequest(ActionKind.HOLD, ("team-a", "Job", "train"))
    try:
        preview = await asyncio.to_thread(session.kube_actuator.preview, request)
    except ReadOnlyViolation:
        return False
    return "read-only" not in preview.refusal


@pytest.mark.parametrize(
    ("config", "flags", "context", "read_only"),
    [
        ("read_only = false\n[contexts.fake]\nread_only = true\n", (), "fake", True),
        ("read_only = true\n[contexts.fake]\nread_only = false\n", (), "fake", False),
        ("read_only = true\n[contexts.fake]\nread_only = false\n", ("--read-only",), "fake", True),
        ("read_only = true\n[contexts.other]\nread_only = false\n", (), "fake", True),
        ("read_only = false\n[contexts.other]\nread_only = true\n", ("--context", "other"), "other", True),
        ("read_only = false\n[contexts.other]\nread_only = true\n", ("--context", "fake"), "fake", False),
        ("read_only = true\n", ("--context", "other"), "other", True),
    ],
    ids=[
        "current-context-own-true",
        "current-context-own-false-beats-global",
        "flag-beats-context",
        "other-context-setting-ignored",
        "named-context-own-true",
        "named-context-without-own",
        "global-only",
    ],
)
async def test_the_console_is_read_only_as_its_context_says(
    fake: FakeApiServer,
    kubeconfig: Path,
    tmp_path: Path,
    config: str,
    flags: tuple[str, ...],
    context: str,
    read_only: bool,
) -> None:
    fake.upsert(JOBS, batch_job("train"))
    path = write_config(tmp_path, config)
    session = await connect("--config", str(path), *flags, "--kubeconfig", str(kubeconfig))
    try:
        assert session.connection_settings.context == context
        assert session.read_only is read_only and session.kube_actuator.read_only is read_only
        assert await writes_allowed(session) is not read_only
        app = make_app(session, tick_interval=0)
        assert app.read_only is read_only
        with pytest.raises(AttributeError):  # no runtime toggle: the console's flag has no setter
            app.read_only = not read_only  # type: ignore[misc]
    finally:
        await asyncio.to_thread(session.close)
    real = [w for w in fake.writes() if "dryRun" not in w.params]
    assert real == []  # only dry runs went out, and only where writes are allowed
    if read_only:
        assert fake.writes() == []


async def test_schedule_names_its_context_when_some_context_is_read_only(
    fake: FakeApiServer, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, "[contexts.fake]\nread_only = true\n")
    argv = ["--config", str(path), "schedule", "--kubeconfig", str(kubeconfig)]
    assert await asyncio.to_thread(cli.main, argv) == 2
    assert "name the context with --context" in capsys.readouterr().err
    assert await asyncio.to_thread(cli.main, [*argv, "--context", "fake"]) == 2
    assert "the context's own read_only" in capsys.readouterr().err
    assert fake.log == []  # refused before connecting
