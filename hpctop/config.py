"""Settings: a TOML file, ``HPCTOP_*`` environment variables and command-line flags, in that order.

Why pydantic-settings: one declaration gives validation, environment parsing (a ``keymap`` can
come from ``HPCTOP_KEYMAP='{"quit": "ctrl+q"}'``) and a description per field, taken from the
attribute docstrings below, so ``docs/usage.md`` and error messages say the same thing as the
code. Precedence is the usual one for command-line tools: built-in defaults < config file <
environment < flags (flags arrive as ``overrides``).

The file is parsed here with :mod:`tomllib` rather than through pydantic-settings' TOML source so
that a syntax error becomes a :class:`~hpctop.errors.ConfigError` naming the file and the line,
and an invalid value names where it came from (file and line, environment variable, or flag).

The console remembers a few choices between runs (the theme picked from the command palette):
:func:`remember` writes one top-level key back into the file, replacing its line when present
and leaving every other line, comment included, as the user wrote it.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from hpctop.errors import ConfigError

ENV_PREFIX = "HPCTOP_"
#: an environment variable naming the config file (like ``--config``)
CONFIG_ENV = "HPCTOP_CONFIG"
DEFAULT_THEME = "hpctop-dark"

# The file's values for the settings being built now. A context variable rather than a class
# attribute so that two loads (two tests, two threads) never see each other's file.
_FILE_VALUES: ContextVar[Mapping[str, Any] | None] = ContextVar("hpctop_config_file_values", default=None)


def _default_user() -> str:
    return os.environ.get("USER") or os.environ.get("LOGNAME") or ""


class ContextSettings(BaseModel):
    """What is set for one kubeconfig context (a ``[contexts.NAME]`` table)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    read_only: bool | None = None
    """Read-only on this context, whatever the global ``read_only`` says (unset: the global one)."""


class Settings(BaseSettings):
    """Everything a user can set for hpctop. Each attribute's docstring is its documentation."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=True,
    )

    theme: str = DEFAULT_THEME
    """Console colour theme: ``hpctop-dark``, ``hpctop-light``, ``hpctop-colorblind`` (or another the
    console lists). A theme picked in the console is written back into the config file."""

    read_only: bool = False
    """Never change the cluster: actions (cancel, hold, requeue, ...) are refused before anything is sent.
    A ``--read-only`` flag beats a context's own ``read_only``, which beats this one."""

    contexts: dict[str, ContextSettings] = Field(default_factory=dict)
    """Settings per kubeconfig context (``[contexts.prod]`` with ``read_only = true``); a context's
    ``read_only`` beats the global one."""

    speed: float = Field(default=60.0, gt=0)
    """Demo and scenario clock speed: virtual seconds that pass per real second."""

    seed: int = Field(default=1, ge=0)
    """Random seed of the simulated cluster; the same seed and ``--at`` give the same tables."""

    refresh_interval: float = Field(default=1.0, gt=0)
    """Real seconds between console updates (each advances the clock by ``speed`` times this)."""

    user: str = Field(default_factory=_default_user)
    """Your user name, for the "mine" filter (``--me``); defaults to ``$USER``."""

    keymap: dict[str, str] = Field(default_factory=dict)
    """Key bindings to change, action name to key (a ``[keymap]`` table with ``quit = "ctrl+q"``)."""

    kubeconfig: Path | None = None
    """Kubeconfig file for a live cluster (default: ``$KUBECONFIG``, then ``~/.kube/config``)."""

    context: str | None = None
    """Kubeconfig context for a live cluster (default: the current context)."""

    namespace: str | None = None
    """Namespace to show on a live cluster (default: all namespaces you may list)."""

    request_timeout: float = Field(default=20.0, gt=0, le=3600)
    """Seconds a one-shot read of a live cluster (``hpctop jobs --kubeconfig ...``) waits for the
    API server to answer a request before failing with a clear error."""

    @field_validator("speed", "refresh_interval")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("keymap")
    @classmethod
    def _keys_not_empty(cls, value: dict[str, str]) -> dict[str, str]:
        for action, key in value.items():
            if not action or not key:
                raise ValueError(f"empty action or key in {action!r} = {key!r}")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins: flags (init kwargs) > environment > file. No .env files, no secrets dirs.
        file_source = InitSettingsSource(settings_cls, init_kwargs=dict(_FILE_VALUES.get() or {}))
        return (init_settings, env_settings, file_source)


def read_only_for(settings: Settings, context: str | None, flag: bool | None = None) -> bool:
    """Whether a session on ``context`` is read-only (RELIABILITY.md R3): the ``--read-only`` flag,
    else that context's ``read_only``, else the global ``read_only`` (config file or environment).

    ``flag`` is None when the flag was not given. ``context`` is the kubeconfig context the session
    actually uses (the current one when none was named). Read-only is decided once, when a session
    starts: the console has no toggle to writes, and nothing switches its context afterwards.
    """
    if flag is not None:
        return flag
    own = settings.contexts.get(context) if context is not None else None
    if own is not None and own.read_only is not None:
        return own.read_only
    return settings.read_only


def field_docs() -> dict[str, str]:
    """Each setting's name and its documentation, in declaration order (for help and docs)."""
    return {name: " ".join((info.description or "").split()) for name, info in Settings.model_fields.items()}


def config_path(explicit: Path | str | None = None) -> Path:
    """The config file to read: ``explicit``, else ``$HPCTOP_CONFIG``, else the XDG location."""
    if explicit is not None:
        return Path(explicit).expanduser()
    from_env = os.environ.get(CONFIG_ENV)
    if from_env:
        return Path(from_env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".config"
    return root / "hpctop" / "config.toml"


def _read_file(path: Path, required: bool) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise ConfigError(f"{path}: file not found") from None
        return {}, ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already ends with "(at line L, column C)"; keep it, name the file.
        raise ConfigError(f"{path}: TOML syntax error: {exc}") from None


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=|^\s*\[\s*{re.escape(key)}\s*\]")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return None


def _line_in_table(text: str, table: str, key: str) -> int | None:
    """The line of ``key`` inside the ``[table]`` table (a ``[contexts.prod]`` entry), else the table's."""
    parts = [re.escape(p) + "|" + re.escape(f'"{p}"') for p in table.split(".")]
    header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(f"(?:{p})" for p in parts) + r"\s*\]")
    key_line = re.compile(rf"^\s*{re.escape(key)}\s*=")
    start = None
    for number, line in enumerate(text.splitlines(), start=1):
        if start is None:
            if header.match(line):
                start = number
        elif line.lstrip().startswith("["):
            break
        elif key_line.match(line):
            return number
    return start


def _where(
    field: str,
    overrides: Mapping[str, Any],
    file_values: Mapping[str, Any],
    path: Path,
    text: str,
    loc: list[str] | None = None,
) -> str:
    """Where a bad value came from, by precedence: a flag, an environment variable, or the file."""
    if field in overrides:
        return "command line"
    env_name = ENV_PREFIX + field.upper()
    if field in Settings.model_fields and any(k.upper() == env_name for k in os.environ):
        return f"environment variable {env_name}"
    if field in file_values:
        nested = loc is not None and len(loc) >= 3
        line = _line_in_table(text, ".".join(loc[:-1]), loc[-1]) if loc and nested else _line_of(text, field)
        return f"{path} line {line}" if line else str(path)
    return "settings"


def _describe(
    exc: ValidationError, overrides: Mapping[str, Any], file_values: Mapping[str, Any], path: Path, text: str
) -> str:
    parts = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        field = loc[0] if loc else "?"
        where = _where(field, overrides, file_values, path, text, loc)
        if error["type"] == "extra_forbidden" and field == "contexts" and len(loc) >= 3:
            known = ", ".join(ContextSettings.model_fields)
            parts.append(f"{where}: unknown setting {'.'.join(loc)!r} (known in a context: {known})")
        elif error["type"] == "extra_forbidden":
            known = ", ".join(Settings.model_fields)
            parts.append(f"{where}: unknown setting {field!r} (known: {known})")
        else:
            name = ".".join(loc) or "?"
            parts.append(f"{where}: {name}: {error['msg']}")
    return "; ".join(parts)


@contextmanager
def _file_values(values: Mapping[str, Any]) -> Iterator[None]:
    token = _FILE_VALUES.set(values)
    try:
        yield
    finally:
        _FILE_VALUES.reset(token)


def load_settings(path: Path | str | None = None, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Read the config file, then the environment, then ``overrides`` (flags given on the command line).

    ``path`` is the ``--config`` flag: when given (or ``$HPCTOP_CONFIG`` is set) the file must
    exist; the default XDG file is optional. Keys whose override is ``None`` are ignored, so a
    caller can pass every flag and let the unset ones fall through.
    """
    required = path is not None or bool(os.environ.get(CONFIG_ENV))
    resolved = config_path(path)
    file_values, text = _read_file(resolved, required)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    try:
        with _file_values(file_values):
            return Settings(**given)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, given, file_values, resolved, text)) from None


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"cannot store {value!r} in a config file")
        return repr(value)
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
        return f'"{escaped}"'
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise ConfigError(f"cannot store a {type(value).__name__} in a config file")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key)


def remember(field: str, value: Any, path: Path | str | None = None) -> Path:
    """Write one setting into the config file (creating it), keeping the rest of the file as it is.

    The value is validated first, so a bad value never reaches the file. A top-level ``field =``
    line (or a ``[field]`` table) is replaced in place; otherwise the line is added before the
    first table. The write is atomic (temporary file, then rename). Returns the file's path.
    """
    if field not in Settings.model_fields:
        raise ConfigError(f"unknown setting {field!r} (known: {', '.join(Settings.model_fields)})")
    try:
        Settings.__pydantic_validator__.validate_assignment(Settings.model_construct(), field, value)
    except ValidationError as exc:
        detail = "; ".join(str(e["msg"]) for e in exc.errors())
        raise ConfigError(f"{field}: {detail}") from None
    target = config_path(path)
    _, text = _read_file(target, required=False)
    new_line = f"{field} = {_toml_value(value)}"
    lines = text.splitlines()
    key_line = re.compile(rf"^\s*{re.escape(field)}\s*=")
    table_line = re.compile(rf"^\s*\[\s*{re.escape(field)}\s*\]\s*(#.*)?$")
    out: list[str] = []
    placed = False
    in_top = True
    skipping_table = False
    for line in lines:
        header = line.lstrip().startswith("[")
        if skipping_table:
            if not header:
                continue
            skipping_table = False
        if header and table_line.match(line) and not placed:
            out.append(new_line)
            placed = True
            skipping_table = True
            continue
        if header and in_top:
            in_top = False
            if not placed:
                while out and not out[-1].strip():
                    out.pop()
                out.extend([new_line, ""])
                placed = True
        if in_top and key_line.match(line) and not placed:
            out.append(new_line)
            placed = True
            continue
        out.append(line)
    if not placed:
        out.append(new_line)
    body = "\n".join(out) + "\n"
    try:
        tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:  # a multi-line value we could not replace safely
        raise ConfigError(f"{target}: cannot update {field!r} without breaking the file ({exc})") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ConfigError(f"{target}: cannot write ({exc})") from None
    return target


def save_theme(name: str, path: Path | str | None = None) -> Path:
    """Remember the console theme for the next start (the console calls this when you pick one)."""
    return remember("theme", name, path)
