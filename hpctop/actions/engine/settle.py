"""After a request: waiting (bounded) for a controller, and settling a lost answer by re-reading.

Why here, once: a timeout, a reset or a 5xx leaves the outcome of a write unknown, and resending
could act twice (a second DELETE on a recreated object, a second Volcano Command). So hpctop
re-reads the object by uid and reports what happened (M5): gone, terminating or replaced means a
cancel happened; the wanted fields present mean a patch happened (the plan may say how else it
shows, e.g. a vcjob's phase); otherwise it did not take effect, which is safe to try again unless
the plan says the answer stays unknown. Waiting for a controller (Kueue's eviction, Volcano's
phase) is the same bounded poll, which stops when the object is deleted or replaced meanwhile.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from hpctop.actions.engine.objects import dig
from hpctop.actions.engine.targets import Seen, Step, Target
from hpctop.actions.requests import OutcomeUnknown
from hpctop.errors import ActionFailed
from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken

Read = Callable[[Target], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True, slots=True)
class Poller:
    """Re-reads an object every ``interval`` seconds (``sleep``), as the engine is configured."""

    read: Read
    interval: float
    sleep: Callable[[float], Awaitable[None]]

    async def until(
        self, target: Target, seen: Seen, done: Callable[[dict[str, Any]], str | None], timeout: float
    ) -> tuple[dict[str, Any] | None, str | None]:
        """Re-read until ``done`` names a reason, at most ``timeout`` seconds: (last read, reason).

        Raises :class:`ActionFailed` when the object is gone or replaced meanwhile (a new uid is
        not the object the user acted on)."""
        polls = max(1, int(timeout / self.interval) + 1) if self.interval > 0 else 1
        now: dict[str, Any] | None = None
        for attempt in range(polls):
            if attempt:
                await self.sleep(self.interval)
            try:
                now = await self.read(target)
            except (ServerUnreachable, StreamBroken) as exc:
                raise ActionFailed(f"lost the API server while waiting on {target}: {exc.detail}") from None
            if now is None or dig(now, "metadata", "uid") != seen.uid:
                raise ActionFailed(f"{target} was deleted or replaced while hpctop waited on it")
            reason = done(now)
            if reason is not None:
                return now, reason
        return now, None


@dataclass(frozen=True, slots=True)
class Settled:
    """A lost answer settled as done: the result's message and what it lists."""

    message: str
    changes: tuple[str, ...]


class SettleRules(Protocol):
    """How one plan's request shows it happened, for :func:`settle` (every plan implements it)."""

    def confirms(self, step: Step, seen: Seen, now: dict[str, Any]) -> str | None:
        """How the re-read object shows ``step`` took effect (a note, maybe empty), or None."""
        ...

    def stays_unknown(self, step: Step, target: Target, now: dict[str, Any] | None, why: str) -> str | None:
        """Why a step that does not show in the re-read may still have happened, or None."""
        ...


async def settle(
    read: Read,
    rules: SettleRules,
    *,
    target: Target,
    seen: Seen,
    step: Step,
    doing: str,
    done_message: str,
    why: str,
    done: list[str],
) -> Settled:
    """The answer to ``step`` was lost or a 5xx: re-read by uid and say what happened; never resend.

    Returns :class:`Settled` when it happened; raises :class:`OutcomeUnknown` when it cannot be
    told, and :class:`ActionFailed` when the re-read shows it did not take effect."""
    try:
        now = await read(target)
    except (ServerUnreachable, StreamBroken, ActionFailed) as exc:
        raise OutcomeUnknown(
            f"outcome unknown for {doing}: {why}, and re-reading failed ({exc}); check the cluster before "
            "trying again"
        ) from None
    replaced = now is not None and dig(now, "metadata", "uid") != seen.uid
    if step.removes:
        if now is None or replaced or dig(now, "metadata", "deletionTimestamp"):
            state = "gone" if now is None or replaced else "terminating"
            return Settled(f"{done_message} (confirmed by re-reading: {state}; {why})", ())
    elif now is not None and not replaced:
        note = rules.confirms(step, seen, now)
        if note is not None:
            return Settled(done_message, (*done, f"confirmed by re-reading after {why}{note}"))
    unknown = rules.stays_unknown(step, target, None if replaced else now, why)
    if unknown is not None:
        raise OutcomeUnknown(f"outcome unknown for {doing}: {why}; {unknown}")
    raise ActionFailed(
        f"{doing} did not take effect ({why}); re-reading shows it unchanged"
        + (f" after: {'; '.join(done)}" if done else "")
        + ". It is safe to try again."
    )


__all__ = ["Poller", "Read", "SettleRules", "Settled", "settle"]
