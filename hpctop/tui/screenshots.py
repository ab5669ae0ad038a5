"""``python -m hpctop.tui.screenshots DIR``: SVG (and PNG when possible) of the console's main screens.

Screens are taken headless with Textual's ``export_screenshot`` from the seeded demo session (the
runtime's ``demo_session``, what ``make demo`` runs), after a few
simulated minutes so the charts have history; the joined Slurm + Kubernetes view from the recorded
Slinky demo (``hpctop --demo-slinky``). PNGs are converted from the SVGs with ``cairosvg``
when it is installed (a pure-Python package over the system's libcairo); without it only SVGs are
written and a line says so, since the SVGs are the reference output anyway.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpctop.runtime.protocols import SessionLike
from hpctop.tui.app import HpctopApp, make_app

SIZE = (160, 48)
SMALL = (80, 24)
LARGE = (200, 50)
SETTLE_STEPS = 20
#: (file name, theme, keys pressed, terminal size): the usual 160x48, and the smallest and a
#: large terminal a user has (the layout changes with the size; see hpctop.tcss)
SHOTS: tuple[tuple[str, str, tuple[str, ...], tuple[int, int]], ...] = (
    # home: the top of the scheduler's order (where the cursor stays until a job is picked)
    ("main", "hpctop-dark", ("home",), SIZE),
    ("main-80x24", "hpctop-dark", ("home",), SMALL),
    ("main-200x50", "hpctop-dark", ("home",), LARGE),
    # the GPU pane on the smallest terminal: the queue pane beside it keeps its counts whole
    ("gpus-80x24", "hpctop-dark", ("1",), SMALL),
    ("job-detail", "hpctop-dark", ("f", "enter"), SIZE),  # the first pending job: why it waits
    ("pending", "hpctop-dark", ("f",), SIZE),
    ("help", "hpctop-dark", ("question_mark",), SIZE),
    ("light", "hpctop-light", ("home",), SIZE),
    ("colorblind-gpu-partition", "hpctop-colorblind", ("z",), SIZE),
)
#: the same console on the DRA demo (``make demo ARGS='--gpu-api dra'``): GPUs in ResourceSlices,
#: held through ResourceClaims, counted as the device plugin's are
DRA_SHOTS: tuple[tuple[str, str, tuple[str, ...], tuple[int, int]], ...] = (
    ("dra-gpus", "hpctop-dark", ("1", "z", "right"), SIZE),
)
#: the same demo written as KAI-Scheduler writes it (``make demo ARGS='--scheduler kai'``): KAI's
#: queue tree, fractional GPUs, and a job KAI refuses over its queue's limit, in the detail
STYLED_SHOTS: tuple[tuple[str, str, str, tuple[str, ...], tuple[int, int]], ...] = (
    ("kai", "kai", "hpctop-dark", ("home",), SIZE),
    # pending jobs, the 4th in the order: a job KAI refuses with OverLimit (the same seed every time)
    ("kai-over-limit", "kai", "hpctop-dark", ("f", "down", "down", "down", "enter"), SIZE),
)


#: the joined Slurm + Kubernetes view, from the recorded Slinky demo (``hpctop --demo-slinky``):
#: charts off (a still recording has no history), the GPU pane at one line per node
SLINKY_SHOTS: tuple[tuple[str, str, str, tuple[str, ...], tuple[int, int]], ...] = (
    ("slinky-joined", "slinky", "hpctop-dark", ("C", "z"), SIZE),
)


def _session(style: str = "hpctop", gpu_api: str = "device-plugin") -> SessionLike:
    if style == "slinky":
        from hpctop.runtime.slinky_demo import slinky_demo_session

        return slinky_demo_session()
    from hpctop.runtime.session import demo_session

    session: SessionLike = demo_session(seed=1, scheduler_style=style, gpu_api=gpu_api)
    return session


async def _shoot(
    name: str,
    theme: str,
    keys: Sequence[str],
    size: tuple[int, int],
    out: Path,
    style: str = "hpctop",
    gpu_api: str = "device-plugin",
) -> Path:
    session = _session(style, gpu_api)
    app: HpctopApp = make_app(session, theme=theme, tick_interval=0, clock=lambda: 0.0, user="alice")
    async with app.run_test(size=size) as pilot:
        for _ in range(SETTLE_STEPS):  # 40 simulated minutes: queues fill, gangs wait, charts grow
            app.step_now(120)
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
        await pilot.pause()
        svg = app.export_screenshot(title=f"hpctop: {name}")
    path = out / f"{name}.svg"
    path.write_text(svg, encoding="utf-8")
    return path


def _png(svg: Path) -> Path | None:
    try:
        import cairosvg  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except (ImportError, OSError):
        return None
    png = svg.with_suffix(".png")
    convert: Any = cairosvg.svg2png
    # Textual's SVG names Fira Code, loaded from the web in a browser; offline, cairo would fall
    # back to a proportional face and the columns would drift. Any installed monospace face with
    # box-drawing glyphs keeps the grid.
    text = svg.read_text(encoding="utf-8").replace("Fira Code", "DejaVu Sans Mono")
    convert(bytestring=text.encode("utf-8"), write_to=str(png), output_width=1920)
    return png


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0] if args else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    missing_png = False
    only = set(args[1:])  # optional: the names of the shots to take
    shots = [(name, "hpctop", theme, keys, size, "device-plugin") for name, theme, keys, size in SHOTS]
    shots += [(*shot, "device-plugin") for shot in (*STYLED_SHOTS, *SLINKY_SHOTS)]
    shots += [(name, "hpctop", theme, keys, size, "dra") for name, theme, keys, size in DRA_SHOTS]
    for name, style, theme, keys, size, gpu_api in shots:
        if only and name not in only:
            continue
        svg = asyncio.run(_shoot(name, theme, keys, size, out, style, gpu_api))
        png = _png(svg)
        missing_png |= png is None
        print(f"{svg}" + (f"  {png}" if png else ""))
    if missing_png:
        print("PNG skipped: install cairosvg (needs libcairo) to convert the SVGs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
