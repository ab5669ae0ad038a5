"""Raw Kubernetes JSON bytes → slim model objects: the one decoder of every kind.

Every source (the simulator, a live API server, a recording) hands over watch events as the
bytes an API server sends: ``{"type": "ADDED", "object": {...}}``, and list pages
``{"metadata": {...}, "items": [...]}``. Each kind has one schema, a msgspec Struct of only the
fields hpctop reads (:mod:`hpctop.model.structs` for the core kinds, each backend's ``read`` or
``wire`` module for its CRDs), and one projection into the frozen objects of
:mod:`hpctop.model.objects`. Which kinds exist is the backend registry's to say
(:data:`hpctop.backends.registry.DECODERS`); this module compiles them and orders the attempts:

1. the fast path: one strict decode of the whole event or page, in C, skipping what is not read;
2. only if that fails, a list page is cut into its items (:func:`hpctop.model.tolerant.split_page`)
   and each is decoded alone, so one bad item never costs the others (nor a 5,000-deep field
   the whole list);
3. an object the strict decode refuses is read field by field (:mod:`hpctop.model.tolerant`): an
   odd field hpctop does not need is dropped, a malformed field it needs makes the object
   malformed.

A malformed object raises (events) or is returned among ``skipped`` (pages) as a
:class:`DecodeError` naming the kind, ``namespace/name`` and field; the store skips, counts and
notes it: an object is applied whole or not at all.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from hpctop.backends.contract import Decoder, Projection
from hpctop.backends.registry import DECODERS
from hpctop.errors import QuantityError
from hpctop.model import structs, tolerant
from hpctop.model.events import EventType, WatchEvent
from hpctop.model.projection import (
    VOLCANO_JOB_KIND,
    DecodeError,
    format_time,
    parse_time,
)
from hpctop.model.quantity import to_milli

#: decoder key (the model's kind) → (its Struct, its projection): every registered backend's
_SCHEMAS: Mapping[str, Decoder] = DECODERS


@dataclass(frozen=True, slots=True)
class _Decoders:
    """The compiled decoders of one kind: a bare object, a watch event, a list page."""

    struct: type[msgspec.Struct]
    project: Projection
    one: msgspec.json.Decoder[Any]
    event: msgspec.json.Decoder[Any]
    page: msgspec.json.Decoder[Any]


def _compile(struct: type[msgspec.Struct], project: Projection) -> _Decoders:
    name = struct.__name__
    event = msgspec.defstruct(f"{name}Event", [("type", str), ("object", struct)], frozen=True, gc=False)
    items: Any = list[struct]  # type: ignore[valid-type]  # a list of this kind's Struct, built here
    page = msgspec.defstruct(
        f"{name}List",
        [
            ("metadata", structs.ListMetaS, structs.NO_LIST_META),
            ("items", items, msgspec.field(default_factory=list)),
        ],
        frozen=True,
        gc=False,
    )
    return _Decoders(
        struct, project, msgspec.json.Decoder(struct), msgspec.json.Decoder(event), msgspec.json.Decoder(page)
    )


_DECODERS: dict[str, _Decoders] = {kind: _compile(*schema) for kind, schema in _SCHEMAS.items()}


def supported_kinds() -> tuple[str, ...]:
    return tuple(_DECODERS)


def decoders_of(kind: str) -> _Decoders:
    found = _DECODERS.get(kind)
    if found is None:
        raise DecodeError(f"no decoder for kind {kind!r}", kind=kind)
    return found


def _identity(obj: Any) -> str:
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else (meta.name or "?")


def _project(kind: str, decoders: _Decoders, obj: Any, api_version: str) -> Any:
    try:
        return decoders.project(obj, api_version)
    except DecodeError as exc:
        raise exc.located(kind, _identity(obj)) from None
    except (QuantityError, ValueError) as exc:  # a projection's own refusal not yet located
        raise DecodeError(str(exc), kind=kind, identity=_identity(obj)) from None


def _fit(kind: str, decoders: _Decoders, parsed: Any) -> Any:
    """A parsed object the strict decode refused, read by the field rules (or refused, located)."""
    try:
        return tolerant.fit(parsed, decoders.struct)
    except tolerant.MalformedField as exc:
        raise DecodeError(
            exc.problem, field=exc.field, kind=kind, identity=tolerant.identity_of(parsed)
        ) from None


def _parse_tolerantly(kind: str, raw: bytes) -> Any:
    """``raw`` parsed by the tolerant reader, or a DecodeError located as well as the bytes allow."""
    try:
        return tolerant.parse(raw)
    except tolerant.MalformedField as exc:
        raise DecodeError(
            exc.problem, field=exc.field, kind=kind, identity=tolerant.guess_identity(raw)
        ) from None


def _object_tolerantly(kind: str, decoders: _Decoders, raw: bytes) -> Any:
    return _fit(kind, decoders, _parse_tolerantly(kind, raw))


def decode_object(kind: str, raw: bytes, api_version: str = "") -> Any:
    """Decode a bare object (an item of a list response) of ``kind``.

    ``api_version`` stands in for the ``apiVersion`` list items lack. Raises :class:`DecodeError`.
    """
    decoders = decoders_of(kind)
    try:
        obj = decoders.one.decode(raw)
    except tolerant.NotTaken:
        obj = _object_tolerantly(kind, decoders, raw)
    return _project(kind, decoders, obj, api_version)


# -- watch events ------------------------------------------------------------------------------------


class _BookmarkMeta(msgspec.Struct, gc=False, frozen=True):
    resourceVersion: str = ""


class _BookmarkObject(msgspec.Struct, gc=False, frozen=True):
    metadata: _BookmarkMeta = _BookmarkMeta()


class _BookmarkEvent(msgspec.Struct, gc=False, frozen=True):
    type: str
    object: _BookmarkObject = _BookmarkObject()


_BOOKMARK = b'"BOOKMARK"'
_BOOKMARK_EVENT = msgspec.json.Decoder(_BookmarkEvent)
#: EventType by its wire name: a dict lookup costs a tenth of ``EventType(name)``
_EVENT_TYPES: dict[str, EventType] = {t.value: t for t in EventType}


def _event_tolerantly(kind: str, decoders: _Decoders, raw: bytes) -> tuple[str, Any]:
    """(type, object Struct) of an event the strict decode refused."""
    parsed = _parse_tolerantly(kind, raw)
    if type(parsed) is not dict or type(parsed.get("type")) is not str:
        raise DecodeError("not a watch event (no type)", kind=kind)
    if "object" not in parsed:
        raise DecodeError("not a watch event (no object)", kind=kind)
    return parsed["type"], _fit(kind, decoders, parsed["object"])


def decode_event(kind: str, raw: bytes) -> WatchEvent:
    """Decode one watch event of a resource ``kind`` from the bytes the server sent.

    Raises :class:`DecodeError` for anything that is not a whole, sensible object.
    """
    decoders = decoders_of(kind)
    if _BOOKMARK in raw[:64]:
        try:
            bookmark = _BOOKMARK_EVENT.decode(raw)
        except tolerant.NotTaken:
            pass
        else:
            if bookmark.type == "BOOKMARK":
                return WatchEvent(EventType.BOOKMARK, kind, None, bookmark.object.metadata.resourceVersion)
    try:
        event = decoders.event.decode(raw)
    except tolerant.NotTaken:
        type_name, obj = _event_tolerantly(kind, decoders, raw)
    else:
        type_name, obj = event.type, event.object
    etype = _EVENT_TYPES.get(type_name)
    if etype is None or etype is EventType.BOOKMARK:
        raise DecodeError(f"unknown watch event type {type_name[:40]!r}", kind=kind, identity=_identity(obj))
    projected = _project(kind, decoders, obj, "")
    return WatchEvent(etype, kind, projected, getattr(projected, "resource_version", ""))


# -- list pages -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DecodedList:
    """One page of a list response: the objects that decoded, the ones that did not, the cursor."""

    objects: list[Any]
    resource_version: str
    continue_token: str | None
    skipped: list[DecodeError]


def decode_list(kind: str, raw: bytes, api_version: str = "") -> DecodedList:
    """Decode a list response page (``PodList``, ``NodeList``, ...), the cyclic GC paused.

    The page is decoded whole for speed; if that fails, its items are decoded one by one so that
    only the bad ones are skipped. Raises :class:`DecodeError` only for a page that is not a list
    response at all. ``api_version`` stands in for the ``apiVersion`` list items lack.

    Why the pause: a page holds thousands of objects alive at once, and each gen-0 collection
    they trigger re-traverses the young ones; on a realistic heap the GC more than doubled bulk
    decode (bench/README.md, ``profile_misses gc``). Nothing built here is cyclic, so reference
    counting frees it all; the collector resumes (if it was on) before returning.
    """
    decoders = decoders_of(kind)
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        try:
            page = decoders.page.decode(raw)
        except tolerant.NotTaken:
            return _decode_item_by_item(kind, decoders, raw, api_version)
        objects: list[Any] = []
        skipped: list[DecodeError] = []
        append = objects.append
        project = decoders.project
        for item in page.items:
            try:
                append(project(item, api_version))
            except (DecodeError, QuantityError, ValueError):
                try:
                    _project(kind, decoders, item, api_version)
                except DecodeError as exc:
                    skipped.append(exc)
        meta = page.metadata
        del page  # the decoded Structs go while the collector is still paused
        return DecodedList(objects, meta.resourceVersion, meta.continue_ or None, skipped)
    finally:
        if paused:
            gc.enable()


_LIST_META = msgspec.json.Decoder(structs.ListMetaS)


def _decode_item_by_item(kind: str, decoders: _Decoders, raw: bytes, api_version: str) -> DecodedList:
    try:
        meta_raw, items = tolerant.split_page(raw)
    except tolerant.NotAList as exc:
        raise DecodeError(f"not a list response ({exc})", kind=f"{kind} list") from None
    try:
        meta = _LIST_META.decode(meta_raw)
    except tolerant.NotTaken:
        meta = structs.NO_LIST_META
    objects: list[Any] = []
    skipped: list[DecodeError] = []
    for item in items:
        try:
            objects.append(decode_object(kind, item, api_version))
        except DecodeError as exc:
            skipped.append(exc)
    return DecodedList(objects, meta.resourceVersion, meta.continue_ or None, skipped)


__all__ = [
    "VOLCANO_JOB_KIND",
    "DecodeError",
    "DecodedList",
    "decode_event",
    "decode_list",
    "decode_object",
    "decoders_of",
    "format_time",
    "parse_time",
    "supported_kinds",
    "to_milli",
]
