"""The console's modules import each other without cycles, lazy imports included (issue 10).

``tui/app`` and ``tui/commands`` used to import each other (the provider cast ``self.app`` to the
app class under ``TYPE_CHECKING``); now the provider names what it needs as a protocol. grimp
(import-linter's graph) reads every import statement, those inside functions and
``TYPE_CHECKING`` blocks too, so a cycle hidden behind a lazy import is found as well.
"""

from __future__ import annotations

import grimp


def _cycles_within(package: str) -> list[list[str]]:
    graph = grimp.build_graph("hpctop", include_external_packages=False)
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & inside) for m in modules}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in edges[module]:
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in modules:
        if module not in state:
            visit(module)
    return cycles


def test_no_import_cycle_in_the_console() -> None:
    assert _cycles_within("hpctop.tui") == []


def test_no_import_cycle_in_the_runtime() -> None:
    assert _cycles_within("hpctop.runtime") == []


def test_the_app_is_wiring() -> None:
    """The dialog flows, permissions, palette back end and detail text are not in tui/app."""
    graph = grimp.build_graph("hpctop", include_external_packages=False)
    imported = graph.find_modules_directly_imported_by("hpctop.tui.app")
    assert {"hpctop.tui.flows", "hpctop.tui.palette", "hpctop.tui.detail_feed"} <= imported
    assert "hpctop.tui.app" not in graph.find_modules_directly_imported_by("hpctop.tui.commands")
