"""Settings: precedence (defaults < file < environment < flags), clear errors, remembering a value."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from hpctop.config import (
    DEFAULT_THEME,
    Settings,
    config_path,
    field_docs,
    load_settings,
    remember,
    save_theme,
)
from hpctop.errors import ConfigError


@pytest.fixture(autouse=True)
def clean_env(private_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No HPCTOP_* from the developer's shell, a private XDG home, and a user of its own."""
    monkeypatch.setenv("USER", "carol")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file() -> None:
    settings = load_settings()
    assert settings.theme == DEFAULT_THEME
    assert settings.read_only is False
    assert settings.seed == 1
    assert settings.user == "carol"
    assert settings.keymap == {}
    assert settings.kubeconfig is None and settings.context is None and settings.namespace is None


def test_xdg_location_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_path() == tmp_path / "xdg" / "hpctop" / "config.toml"
    write(config_path(), 'theme = "hpctop-light"\n')
    assert load_settings().theme == "hpctop-light"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_path() == tmp_path / "home" / ".config" / "hpctop" / "config.toml"


def test_precedence_file_then_env_then_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(
        tmp_path / "c.toml", 'theme = "from-file"\nseed = 7\nspeed = 10\n[keymap]\nquit = "ctrl+q"\n'
    )
    settings = load_settings(path)
    assert (settings.theme, settings.seed, settings.speed) == ("from-file", 7, 10.0)
    monkeypatch.setenv("HPCTOP_THEME", "from-env")
    monkeypatch.setenv("HPCTOP_SEED", "8")
    monkeypatch.setenv("HPCTOP_READ_ONLY", "true")
    monkeypatch.setenv("HPCTOP_KEYMAP", '{"help": "f1"}')
    settings = load_settings(path)
    assert (settings.theme, settings.seed, settings.speed, settings.read_only) == ("from-env", 8, 10.0, True)
    # tables merge key by key: the environment adds a binding, the file's stays
    assert settings.keymap == {"quit": "ctrl+q", "help": "f1"}
    settings = load_settings(path, {"theme": "from-flag", "seed": None, "read_only": None})
    assert (settings.theme, settings.seed) == ("from-flag", 8)  # None means "flag not given"


def test_config_env_variable_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "elsewhere.toml", "seed = 42\n")
    monkeypatch.setenv("HPCTOP_CONFIG", str(path))
    assert load_settings().seed == 42
    monkeypatch.setenv("HPCTOP_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="file not found"):
        load_settings()


def test_explicit_missing_file_is_an_error_but_the_default_one_is_optional(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: file not found"):
        load_settings(tmp_path / "missing.toml")
    assert load_settings().seed == 1


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", 'theme = "x"\n\nspeed = \n')
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert caught.value.exit_code == 2
    assert "c.toml" in caught.value.detail and "line 3" in caught.value.detail


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('theme = "a"\nspeed = "fast"\n', r"c\.toml line 2: speed: Input should be a valid number"),
        ("speed = 0\n", r"line 1: speed: Input should be greater than 0"),
        ("refresh_interval = -1\n", "refresh_interval"),
        ("seed = -3\n", "seed"),
        ("colour = 'red'\n", r"line 1: unknown setting 'colour' \(known: theme, read_only"),
        ("[keymap]\nquit = 3\n", r"keymap\.quit"),
        ("read_only = 'perhaps'\n", "read_only"),
    ],
)
def test_bad_values_name_where_they_came_from(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path / "c.toml", text)
    with pytest.raises(ConfigError, match=expected):
        load_settings(path)


def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HPCTOP_SPEED", "fast")
    with pytest.raises(ConfigError, match="environment variable HPCTOP_SPEED: speed"):
        load_settings()


def test_bad_flag_value_names_the_command_line() -> None:
    with pytest.raises(ConfigError, match="command line: seed"):
        load_settings(None, {"seed": "many"})


def test_every_field_is_documented() -> None:
    docs = field_docs()
    assert set(docs) == set(Settings.model_fields)
    assert all(len(text) > 20 for text in docs.values()), docs
    for name in (
        "theme",
        "read_only",
        "speed",
        "seed",
        "refresh_interval",
        "user",
        "keymap",
        "kubeconfig",
        "context",
        "namespace",
    ):
        assert name in docs


def test_remember_creates_the_file_and_updates_in_place(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    assert save_theme("hpctop-light", path) == path
    assert tomllib.loads(path.read_text()) == {"theme": "hpctop-light"}
    write(
        path,
        '# my settings\ntheme = "old"  # the theme\nseed = 3\n\n[keymap]\nquit = "q"\n',
    )
    save_theme("hpctop-colorblind", path)
    remember("speed", 120.0, path)
    text = path.read_text()
    assert text.startswith("# my settings\n")
    assert tomllib.loads(text) == {
        "theme": "hpctop-colorblind",
        "seed": 3,
        "speed": 120.0,
        "keymap": {"quit": "q"},
    }
    assert load_settings(path).theme == "hpctop-colorblind"


def test_remember_replaces_a_table(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", 'seed = 2\n[keymap]\nquit = "q"\nhelp = "?"\n')
    remember("keymap", {"quit": "ctrl+q"}, path)
    assert tomllib.loads(path.read_text()) == {"seed": 2, "keymap": {"quit": "ctrl+q"}}


def test_remember_default_location(tmp_path: Path) -> None:
    save_theme('odd "name"')
    assert load_settings().theme == 'odd "name"'


@pytest.mark.parametrize(
    ("field", "value", "expected"), [("speed", -1, "greater than 0"), ("nope", 1, "unknown setting")]
)
def test_remember_validates_before_writing(tmp_path: Path, field: str, value: object, expected: str) -> None:
    path = write(tmp_path / "c.toml", "seed = 2\n")
    with pytest.raises(ConfigError, match=expected):
        remember(field, value, path)
    assert path.read_text() == "seed = 2\n"


def test_remember_refuses_to_break_a_broken_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "seed = \n")
    with pytest.raises(ConfigError, match="line 1"):
        save_theme("x", path)
    assert path.read_text() == "seed = \n"


def test_usage_doc_lists_every_setting_with_its_variable() -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text(encoding="utf-8")
    for name in Settings.model_fields:
        assert f"| `{name}` | `HPCTOP_{name.upper()}`" in doc, name
