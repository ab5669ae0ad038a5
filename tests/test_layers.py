"""The core stays free of Textual: importing every non-UI package loads no Textual or Rich module.

import-linter checks the static imports (``make lint``); this test checks what actually gets
loaded at run time, in a fresh interpreter, so a lazy or dynamic import cannot slip through.
"""

from __future__ import annotations

import subprocess
import sys

CORE_PACKAGES = [
    "hpctop.model.store",
    "hpctop.model.decode",
    "hpctop.scheduling.types",
    "hpctop.actions.requests",
    "hpctop.tables",
    "hpctop.config",
]


def test_core_imports_no_textual() -> None:
    code = (
        "import sys, importlib\n"
        f"for name in {CORE_PACKAGES!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'textual_plotext'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
