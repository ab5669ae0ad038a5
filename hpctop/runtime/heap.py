"""Whether the process's heap is frozen, known without asking the GC.

Why: ``gc.get_freeze_count()`` walks every frozen object (CPython 3.11's permanent generation
is a linked list it counts): 32 ms with 3 M objects frozen. The simulator's session asks before
each promotion of young objects (:func:`hpctop.runtime.session.promote_young`, several times a
virtual minute), and a process that froze a big store (the live console once synced, or
``make bench`` after P3/P5's consoles) paid that walk on every one: P7 in the full bench of
session 13 ran at 62x instead of ~1,000x. Freezes and unfreezes made through :func:`freeze` and
:func:`unfreeze` are counted here in O(1); :func:`frozen` asks the GC only when none is recorded,
which costs nothing when nothing is frozen (and catches a freeze made elsewhere).
"""

from __future__ import annotations

import gc

_frozen = [False]  # a freeze through ``freeze`` not undone by ``unfreeze``


def freeze() -> None:
    """``gc.freeze()``, recorded."""
    gc.freeze()
    _frozen[0] = True


def unfreeze() -> None:
    """``gc.unfreeze()``, recorded."""
    gc.unfreeze()
    _frozen[0] = False


def frozen() -> bool:
    """Whether anything is frozen: O(1) after a recorded freeze; else the GC's count (0 walks
    nothing when nothing is frozen)."""
    return _frozen[0] or gc.get_freeze_count() > 0
