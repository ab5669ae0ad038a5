"""One error hierarchy (issue 10): every exception hpctop defines is an ``HpctopError``, so a
caller can catch hpctop's own failures in one place, and no two of them share a name (two
``Forbidden`` classes, one for the API server's 403 and one for an action's, were easy to catch
the wrong one of). Private control-flow exceptions (a leading underscore) are left out."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import hpctop
from hpctop.errors import HpctopError


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(hpctop.__path__, "hpctop."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def test_every_public_exception_is_an_hpctop_error() -> None:
    classes = [c for c in _exception_classes() if not c.__name__.startswith("_")]
    assert len(classes) > 10  # the walk found the package's errors
    outside = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, HpctopError))
    assert outside == []


def test_no_two_exception_classes_share_a_name() -> None:
    names: dict[str, list[str]] = {}
    for c in _exception_classes():
        names.setdefault(c.__name__, []).append(c.__module__)
    assert {name: where for name, where in names.items() if len(where) > 1} == {}
