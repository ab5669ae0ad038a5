"""Themes as data: TOML files validated into a model, then turned into Textual themes.

A theme names *meanings* (``gpu-free``, ``job-pending``, ``queue-over-share``) rather than places,
so every pane asks for the colour of what it draws and a colour-blind palette is one file, not a
code change. Files are validated (every semantic variable present, every value a colour) so a typo
fails with the file and key named instead of a grey screen. They are read from the installed
package (``hpctop/themes``, force-included into the wheel) first and from the repository's
``themes/`` folder second, so an editable checkout and an installed wheel behave the same.
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.theme import Theme

from hpctop.errors import ConfigError

DEFAULT_THEME = "hpctop-dark"

#: Every theme must define these; panes read them through ``App.theme_variables``.
SEMANTIC = (
    "gpu-free",
    "gpu-busy",
    "gpu-partial",
    "gpu-down",
    "job-pending",
    "job-running",
    "job-held",
    "job-done",
    "job-failed",
    "queue-over-share",
    "queue-under-share",
    "queue-guaranteed",
    "stale",
    "read-only",
    *(f"queue-color-{i}" for i in range(8)),
)

#: Fallbacks so a built-in Textual theme picked from the palette still draws every pane.
DEFAULT_VARIABLES = {
    "gpu-free": "#555555",
    "gpu-busy": "#3FB950",
    "gpu-partial": "#9BD37A",
    "gpu-down": "#F2545B",
    "job-pending": "#F5A524",
    "job-running": "#3FB950",
    "job-held": "#B084F5",
    "job-done": "#888888",
    "job-failed": "#F2545B",
    "queue-over-share": "#F2545B",
    "queue-under-share": "#3FB950",
    "queue-guaranteed": "#4FA3E0",
    "stale": "#F5A524",
    "read-only": "#F2545B",
    "queue-color-0": "#4FA3E0",
    "queue-color-1": "#F5A524",
    "queue-color-2": "#3FB950",
    "queue-color-3": "#E06C9F",
    "queue-color-4": "#B084F5",
    "queue-color-5": "#56D4DD",
    "queue-color-6": "#E5C07B",
    "queue-color-7": "#98A2B3",
}

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


def _check_colour(value: str) -> str:
    if not _HEX.match(value):
        raise ValueError(f"{value!r} is not a #rrggbb colour")
    return value


class ThemeColors(BaseModel):
    model_config = ConfigDict(extra="forbid")

    primary: str
    secondary: str
    accent: str
    warning: str
    error: str
    success: str
    foreground: str
    background: str
    surface: str
    panel: str

    @field_validator("*")
    @classmethod
    def _colour(cls, value: str) -> str:
        return _check_colour(value)


class ThemeSpec(BaseModel):
    """One theme file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    dark: bool = True
    colors: ThemeColors
    variables: dict[str, str]

    @field_validator("variables")
    @classmethod
    def _semantic(cls, value: dict[str, str]) -> dict[str, str]:
        missing = [k for k in SEMANTIC if k not in value]
        if missing:
            raise ValueError(f"missing semantic variables: {', '.join(missing)}")
        for key, colour in value.items():
            try:
                _check_colour(colour)
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
        return value

    def to_theme(self) -> Theme:
        c = self.colors
        return Theme(
            name=self.name,
            primary=c.primary,
            secondary=c.secondary,
            accent=c.accent,
            warning=c.warning,
            error=c.error,
            success=c.success,
            foreground=c.foreground,
            background=c.background,
            surface=c.surface,
            panel=c.panel,
            dark=self.dark,
            variables=dict(self.variables),
        )


def parse_theme(text: str, origin: str = "<theme>") -> ThemeSpec:
    """Validate one theme file's text; :class:`ConfigError` names the file and the problem."""
    try:
        data = tomllib.loads(text)
        return ThemeSpec.model_validate(data)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{origin}: {problems}") from None


def _theme_sources() -> list[tuple[str, str]]:
    """(origin, text) of every theme file: installed package first, repository folder second."""
    found: list[tuple[str, str]] = []
    try:
        pkg = resources.files("hpctop").joinpath("themes")
        if pkg.is_dir():
            for entry in sorted(pkg.iterdir(), key=lambda e: e.name):
                if entry.name.endswith(".toml"):
                    found.append((f"hpctop/themes/{entry.name}", entry.read_text("utf-8")))
    except (FileNotFoundError, ModuleNotFoundError, NotADirectoryError):
        pass
    repo = Path(__file__).resolve().parents[2] / "themes"
    if repo.is_dir():
        for path in sorted(repo.glob("*.toml")):
            found.append((str(path), path.read_text("utf-8")))
    return found


def load_themes() -> dict[str, Theme]:
    """Every available hpctop theme by name (the first file found for a name wins)."""
    themes: dict[str, Theme] = {}
    for origin, text in _theme_sources():
        spec = parse_theme(text, origin)
        themes.setdefault(spec.name, spec.to_theme())
    return themes
