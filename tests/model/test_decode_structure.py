"""The decoder's shape (issue 10): one schema per kind in msgspec, no pydantic, no import cycle.

Why: the Pod schema was declared three times (pydantic models, TypedDicts, msgspec Structs) with
three projections, batch Jobs and the CRDs decoded through pydantic (a cold-start cost, issue 16),
and ``model.decode`` and ``model.backends.wire`` imported each other (one side lazily).
"""

from __future__ import annotations

import subprocess
import sys

import grimp
import msgspec

from hpctop.model import decode


def test_the_decoder_does_not_import_pydantic() -> None:
    code = (
        "import sys, hpctop.model.store, hpctop.model.decode\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_kind_decodes_through_a_msgspec_struct() -> None:
    for kind in decode.supported_kinds():
        decoders = decode.decoders_of(kind)
        assert issubclass(decoders.struct, msgspec.Struct), kind


def test_no_import_cycle_in_the_model_lazy_imports_included() -> None:
    graph = grimp.build_graph("hpctop")  # grimp reads every import statement, in functions too
    modules = sorted(m for m in graph.modules if m.startswith("hpctop.model."))
    for importer in modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported.startswith("hpctop.model.") and imported != importer:
                back = graph.find_shortest_chain(importer=imported, imported=importer)
                assert back is None, f"{importer} -> {imported} -> ... -> {importer}: {back}"
