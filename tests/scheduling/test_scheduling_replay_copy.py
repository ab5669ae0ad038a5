"""The replayed turns' outcomes are copies of the recorded ones with every field (``core.Outcome.copy``)."""

from __future__ import annotations


def test_an_outcomes_copy_has_every_field() -> None:
    """``core.Outcome.copy`` (the replay's cheap copy) lists the fields by hand: a field added
    later and left out would be dropped from every replayed turn."""
    from dataclasses import fields, replace

    from hpctop.scheduling.core import Outcome

    values = {f.name: object() for f in fields(Outcome)}
    original = Outcome(**values)  # type: ignore[arg-type]  # distinct markers, not real values
    copied = original.copy()
    assert copied is not original and copied == replace(original)
    assert all(getattr(copied, name) is value for name, value in values.items())
