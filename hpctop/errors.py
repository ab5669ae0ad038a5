"""One error hierarchy for hpctop.

Every error a user can meet carries a short ``title`` for the status bar or the first line of a
shell message, and a ``detail`` with what happened and what to do. Code raises these instead of
bare ``ValueError`` where the message reaches a person, so the CLI and the console can print them
the same way and exit with a distinct status.
"""

from __future__ import annotations


class HpctopError(Exception):
    """Base of every error hpctop reports to a user."""

    title = "hpctop error"
    exit_code = 1

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.title}: {self.detail}"


class PlainMessageError(HpctopError):
    """An hpctop error whose text is shown as it is, without the title: a status-bar line, a
    note or a message another error embeds (the title would only repeat what the place says)."""

    def __str__(self) -> str:
        return self.detail


class QuantityError(HpctopError, ValueError):
    """A Kubernetes quantity string could not be parsed."""

    title = "invalid quantity"


class ScenarioError(HpctopError):
    """A scenario file is malformed; the detail names the line and field."""

    title = "invalid scenario"
    exit_code = 2


class ConfigError(HpctopError):
    """The configuration file or environment holds an invalid setting."""

    title = "invalid configuration"
    exit_code = 2


class UsageError(HpctopError):
    """The command line asked for something that does not exist (bad filter, column, format)."""

    title = "usage error"
    exit_code = 2


class ActionRefused(HpctopError):
    """An action was refused before anything was sent (read-only mode, permissions, job state)."""

    title = "action refused"


class ActionFailed(HpctopError):
    """An action was sent and the cluster (or the simulator) answered with an error."""

    title = "action failed"
