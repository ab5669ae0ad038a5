"""P8 peer: ``hpctop jobs`` against ``kubectl get pods -A`` on the same API server, same pods.

Both are separate processes started the way a user starts them, against one server on 127.0.0.1
serving kubelet-shaped pods (:func:`bench.payloads.served_pod`: owner references, labels, env,
volumes, probes, status, ``managedFields``; ~7 KiB each). Compared:

- ``hpctop jobs -a -o json`` vs ``kubectl get pods -A -o json``;
- ``hpctop jobs -a`` vs ``kubectl get pods -A`` (kubectl asks for a server-side ``Table``, as a
  real API server answers it: the cells and each pod's metadata, managedFields included).

Wall time (start to exit) and maximum RSS of the child (``os.wait4``'s rusage), interleaved
(hpctop json, kubectl json, hpctop table, kubectl table, ...), medians; one untimed warm-up of
each first (kubectl's discovery cache, the page cache). Both outputs go to ``/dev/null``; the
warm-up's output is read and must hold every pod on both sides.

The server answers pre-built bytes per (``limit``, ``continue``, table or not), built before the
timed region: hpctop asks for pages of 5,000, kubectl for 500, and each gets what a real server
would send (never more items than the limit). Discovery (``/api``, ``/apis``, ``/api/v1``,
``/version``) is answered too; any other collection (batch Jobs, Deployments, PriorityClasses,
which hpctop lists beside the pods) is served empty, as a real server serves them, and every
other path is a 404 Status.

Needs Debian's ``kubectl`` (``apt-get install kubectl``); without it the line says so and skips.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Collection
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from bench.common import Verdict, ratio
from bench.p4_cold import _cold_start, _loads_all, check_reference, kubeconfig
from bench.payloads import served_pod

KUBECTL = "kubectl"
NODE_COUNT = 64
_API_RESOURCES = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "v1",
    "resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "shortNames": ["po"],
         "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"], "categories": ["all"]},
        {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node", "shortNames": ["no"],
         "verbs": ["get", "list", "watch"]},
    ],
}  # fmt: skip
_STATIC = {
    "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": _API_RESOURCES,
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"},
}
#: a cluster-wide collection path of the core API or an API group (``/api/v1/x``, ``/apis/g/v/x``)
_COLLECTION = re.compile(r"/api/v1/[a-z]+|/apis/[a-z0-9.-]+/[a-z0-9]+/[a-z]+")
_TABLE_COLUMNS = [
    {"name": n, "type": t, "format": f, "description": "", "priority": p}
    for n, t, f, p in [
        ("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
        ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
        ("Node", "string", "", 1), ("Nominated Node", "string", "", 1), ("Readiness Gates", "string", "", 1),
    ]
]  # fmt: skip


def _table_row(pod: dict[str, Any]) -> dict[str, Any]:
    statuses = pod.get("status", {}).get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    cells = [
        pod["metadata"]["name"], f"{ready}/{len(pod['spec'].get('containers') or [])}",
        pod.get("status", {}).get("phase", ""), str(restarts), "10d",
        pod.get("status", {}).get("podIP", "<none>"), pod["spec"].get("nodeName", "<none>"),
        "<none>", "<none>",
    ]  # fmt: skip
    meta = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": pod["metadata"]}
    return {"cells": cells, "object": meta}


class PeerServer:
    """Pods and nodes as pre-built pages, in a thread with its own event loop."""

    def __init__(self, pods: int, *, hold_watches: bool = False) -> None:
        #: answer a watch with an open stream that stays silent (a console's reflectors then sit
        #: synced, as on a quiet cluster) instead of 405 (the one-shot commands never watch)
        self.hold_watches = hold_watches
        #: watches opened so far, per collection path: a reflector watches once its list is done
        self.watches: dict[str, int] = {}
        rng = random.Random(8)
        # only the bytes are kept (at 100k pods the dicts alone were gigabytes beside kubectl's)
        self.pod_bytes: list[bytes] = []
        self.row_bytes: list[bytes] = []
        for i in range(pods):
            pod = served_pod(i, rng, per_job=1)
            pod["spec"]["nodeName"] = f"gpu-node-{i % NODE_COUNT:05d}"
            del pod["kind"], pod["apiVersion"]  # list items carry neither
            self.pod_bytes.append(orjson.dumps(pod))
            self.row_bytes.append(orjson.dumps(_table_row(pod)))
        from bench.payloads import node_event

        self.node_bytes = []
        for i in range(NODE_COUNT):
            node = orjson.loads(node_event(i))["object"]
            del node["kind"], node["apiVersion"]
            self.node_bytes.append(orjson.dumps(node))
        self.size = sum(map(len, self.pod_bytes))
        self._pages: dict[tuple[str, int, bool], list[bytes]] = {}
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="p8-server", daemon=True)

    def pages(self, path: str, limit: int, table: bool) -> list[bytes]:
        key = (path, limit, table)
        if key not in self._pages:
            items = self.pod_bytes if path.endswith("/pods") else self.node_bytes
            if table and path.endswith("/pods"):
                items = self.row_bytes
            kind = "Pod" if path.endswith("/pods") else "Node"
            limit = limit or len(items) or 1
            chunks = [items[i : i + limit] for i in range(0, len(items), limit)] or [[]]
            out = []
            for n, chunk in enumerate(chunks):
                meta: dict[str, object] = {"resourceVersion": "9"}
                if n + 1 < len(chunks):
                    meta["continue"] = str(n + 1)
                    meta["remainingItemCount"] = len(items) - (n + 1) * limit
                head: dict[str, object]
                if table and kind == "Pod":
                    head = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
                    head["columnDefinitions"] = _TABLE_COLUMNS
                    field = b',"rows":['
                else:
                    head = {"kind": f"{kind}List", "apiVersion": "v1", "metadata": meta}
                    field = b',"items":['
                out.append(orjson.dumps(head)[:-1] + field + b",".join(chunk) + b"]}")
            self._pages[key] = out
        return self._pages[key]

    def prebuild(self) -> None:
        """The pages both clients ask for, built before anything is timed."""
        for limit, table in ((5000, False), (500, False), (500, True)):
            self.pages("/api/v1/pods", limit, table)
        self.pages("/api/v1/nodes", 5000, False)
        self.pod_bytes, self.row_bytes = [], []  # the pages hold their own copies

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/")
        if path in _STATIC:
            return web.Response(body=orjson.dumps(_STATIC[path]), content_type="application/json")
        if path in ("/api/v1/pods", "/api/v1/nodes"):
            if request.query.get("watch") in ("1", "true"):
                if not self.hold_watches:
                    return web.Response(status=405, body=b'{"kind":"Status","code":405}')
                self.watches[path] = self.watches.get(path, 0) + 1
                stream = web.StreamResponse(headers={"Content-Type": "application/json"})
                await stream.prepare(request)
                await asyncio.Event().wait()  # silent until the client goes (cancelled then)
                return stream
            table = "as=Table" in request.headers.get("Accept", "")
            pages = self.pages(path, int(request.query.get("limit") or 0), table)
            index = int(request.query.get("continue") or 0)
            return web.Response(body=pages[index], content_type="application/json")
        if _COLLECTION.fullmatch(path) and request.query.get("watch") not in ("1", "true"):
            # any other collection of the core API groups (batch Jobs, Deployments, PriorityClasses):
            # served and empty, as on a real server (a 404 would make hpctop note a missing API)
            empty = {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}, "items": []}
            return web.Response(body=orjson.dumps(empty), content_type="application/json")
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": "NotFound",
            "code": 404,
        }
        return web.Response(status=404, body=orjson.dumps(status), content_type="application/json")

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._answer)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    def __enter__(self) -> PeerServer:
        self._thread.start()
        self._ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


#: the launcher: a bare Python (``-I -S``) that spawns each command and reports its rusage
_LAUNCHER = r"""
import json, os, sys, time
for line in sys.stdin:
    argv, env, out, err = json.loads(line)
    actions = [(os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
               (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    print(json.dumps([elapsed, usage.ru_maxrss, os.waitstatus_to_exitcode(status)]), flush=True)
"""


class Launcher:
    """Starts the timed commands from a small process of its own.

    Why not from here: Linux carries the RSS high-water mark of the address space a process had
    before ``exec`` into its ``ru_maxrss``, and a child forked (or vforked) from the bench holds
    the bench's address space, the server's payload included, so every child would report the
    bench's size. The launcher is started before the payload is built and stays near 10 MiB: that
    is the floor of the figures (:attr:`floor`, printed with them).
    """

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.floor = self.time(["true"], dict(os.environ), Path(os.devnull))[1]

    def time(
        self, argv: list[str], env: dict[str, str], out: Path, killable: bool = False
    ) -> tuple[float, int]:
        """(wall seconds, max RSS in bytes) of one command, its stdout written to ``out``.

        With ``killable`` a command the kernel killed (SIGKILL: on this machine the out-of-memory
        killer; kubectl's JSON at 100k pods needs ~17 GiB) is a result, not an error: its wall
        time is infinite and its max RSS the high-water mark it reached before it was killed.
        """
        assert self.process.stdin is not None and self.process.stdout is not None
        err = Path(os.devnull) if out == Path(os.devnull) else out.with_suffix(".err")
        self.process.stdin.write(orjson.dumps([argv, env, str(out), str(err)]) + b"\n")
        self.process.stdin.flush()
        elapsed, maxrss_kib, code = orjson.loads(self.process.stdout.readline())
        if code == -signal.SIGKILL and killable:
            return math.inf, int(maxrss_kib) * 1024
        if code != 0:
            raise RuntimeError(f"{argv[0]} {argv[1]} exited {code}: {err.read_text(errors='replace')[-300:]}")
        return float(elapsed), int(maxrss_kib) * 1024

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(10)


def _commands(config: str, cache: str) -> dict[str, list[str]]:
    hpctop = [sys.executable, "-m", "hpctop", "jobs", "--kubeconfig", config, "-a"]
    kubectl = [KUBECTL, "--kubeconfig", config, "--cache-dir", cache, "get", "pods", "-A"]
    return {
        "hpctop json": [*hpctop, "-o", "json"],
        "kubectl json": [*kubectl, "-o", "json"],
        "hpctop table": hpctop,
        "kubectl table": kubectl,
    }


def _job_of(item: dict[str, Any]) -> tuple[str, str]:
    """(namespace, the owning Job's name) of a pod in kubectl's items: the job hpctop shows it
    under (each served pod is its own Job's only pod)."""
    meta = item["metadata"]
    owners = [ref["name"] for ref in meta.get("ownerReferences") or () if ref.get("kind") == "Job"]
    return meta["namespace"], owners[0] if owners else meta["name"]


def _check_outputs(outputs: dict[str, bytes], pods: int, killed: Collection[str] = ()) -> None:
    """The warm-up's outputs hold every pod, the same ones on both sides: hpctop's jobs by
    (namespace, name) against the owning Jobs of kubectl's items, kubectl's table rows by
    (namespace, pod) against its items, hpctop's table by its count of rows (a side the kernel
    killed wrote no whole output: only the others are checked)."""
    counts: dict[str, int] = {}
    jobs = orjson.loads(outputs["hpctop json"])
    jobs = jobs.get("jobs", jobs) if isinstance(jobs, dict) else jobs
    ours = {(job["namespace"], job["name"]) for job in jobs}
    counts["hpctop json"] = len(jobs)
    if "kubectl json" not in killed:
        items = orjson.loads(outputs["kubectl json"])["items"]
        counts["kubectl json"] = len(items)
        theirs = {_job_of(item) for item in items}
        if ours != theirs:
            only = sorted(ours ^ theirs)[:3]
            raise RuntimeError(f"hpctop's jobs and kubectl's pods differ: {len(ours ^ theirs)}, e.g. {only}")
        if "kubectl table" not in killed:
            listed = {(item["metadata"]["namespace"], item["metadata"]["name"]) for item in items}
            rows = {tuple(line.split()[:2]) for line in outputs["kubectl table"].decode().splitlines()[1:]}
            if rows != listed:
                raise RuntimeError(f"kubectl's table and items differ: {len(rows ^ listed)} pods on one side")
    for name in ("hpctop table", "kubectl table"):
        if name not in killed:
            counts[name] = outputs[name].count(b"\n") - 1
    if any(count != pods for count in counts.values()):
        raise RuntimeError(f"outputs hold {counts} rows, expected {pods}")


def first_paint(server: PeerServer, config: str, pods: int) -> tuple[float, float]:
    """(the console's first full paint, ``orjson.loads`` of the same pages with the GC off), seconds.

    The console as P4 times it (:func:`bench.p4_cold._cold_start`: ``list_once`` into a running
    console's store, its tick, one repaint, every job on the pane), here on this server's
    realistic pods; the reference is the pages hpctop asked for, parsed by ``orjson.loads``.
    """
    painted = asyncio.run(_cold_start(config, pods, NODE_COUNT))
    pages = {path: server.pages(path, 5000, False) for path in ("/api/v1/pods", "/api/v1/nodes")}
    seconds, items = _loads_all(pages, "off")
    check_reference(items, pods, NODE_COUNT)
    return painted, seconds


def measure(
    launcher: Launcher, pods: int, repeats: int, paint: bool = False
) -> tuple[dict[str, list[tuple[float, int]]], int, tuple[float, float] | None]:
    """Every (seconds, max RSS) per side at ``pods`` pods, interleaved; the bytes of the pods; and
    with ``paint`` the console's first full paint and its orjson reference (:func:`first_paint`)."""
    with tempfile.TemporaryDirectory() as tmp, PeerServer(pods) as server:
        server.prebuild()
        root = Path(tmp)
        config = kubeconfig(root, server.url)
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=tmp, XDG_CACHE_HOME=tmp, HPCTOP_NO_CACHE="1")
        env.pop("KUBECONFIG", None)
        commands = _commands(config, str(root / "kubecache"))
        outputs = {}
        warm: dict[str, list[tuple[float, int]]] = {}
        killed: set[str] = set()
        for name, argv in commands.items():  # warm-up, untimed: discovery cache, page cache, checks
            warm[name] = [launcher.time(argv, env, root / "out", killable=name.startswith("kubectl"))]
            if math.isinf(warm[name][0][0]):
                killed.add(name)
            outputs[name] = (root / "out").read_bytes()
        _check_outputs(outputs, pods, killed)
        results: dict[str, list[tuple[float, int]]] = {name: [] for name in commands}
        for name in killed:  # killed once: not run again (each try takes minutes before the kill)
            results[name] = warm[name]
        for _ in range(repeats):
            for name, argv in commands.items():
                if name not in killed:
                    results[name].append(launcher.time(argv, env, root / "out"))
        painted = first_paint(server, config, pods) if paint else None
        # smoke size (no repeats): the warm-up's figures (a cold discovery cache for kubectl)
        return (results if repeats else warm), server.size, painted


def _median(values: list[tuple[float, int]]) -> tuple[float, float]:
    return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)


def run(*args: int) -> Verdict:
    """``run(size, ..., repeats)``: the sizes in pods, then the repeats per size."""
    *sizes, repeats = args
    if shutil.which(KUBECTL) is None:
        return Verdict.cannot_run("P8 peer", "kubectl is not installed (apt-get install kubectl)")
    print(f"P8: {shutil.which(KUBECTL)} ({_kubectl_version()})", file=sys.stderr)
    launcher = Launcher()  # first, while this process is small (see Launcher)
    try:
        measured = []
        for pods in sizes:
            measured.append((pods, *measure(launcher, pods, repeats, paint=pods == sizes[-1])))
            print(f"P8 at {pods:,} pods: {_medians_text(measured[-1][1])}", file=sys.stderr, flush=True)
    finally:
        launcher.close()
    lines = []
    paint_note = ""
    per_pod: dict[str, list[float]] = {"hpctop json": [], "hpctop table": []}
    speedups: list[float] = []
    leaner: list[float] = []
    killed_notes: list[str] = []
    for pods, results, size, painted in measured:
        m = {name: _median(values) for name, values in results.items()}
        if painted is not None:
            paint_note = (
                f"; the console's first full paint at {pods:,} pods {painted[0]:.1f} s"
                f" = {ratio(painted[0] / painted[1], 1)} orjson.loads of the same pages,"
                f" GC off ({painted[1]:.1f} s)"
            )
        for form in ("json", "table"):
            (ht, hr), (kt, kr) = m[f"hpctop {form}"], m[f"kubectl {form}"]
            per_pod[f"hpctop {form}"].append(ht / pods)
            if math.isinf(kt):  # kubectl did not finish: the kernel killed it at kr bytes
                killed_notes.append(
                    f"kubectl {form} at {pods:,} pods killed by the kernel (out of memory) at"
                    f" {kr / 2**30:.1f} GiB, where hpctop took {ht:.1f} s and {hr / 2**20:,.0f} MiB"
                )
                lines.append(f"  {pods:>7,} pods {form:<5}: {killed_notes[-1]}")
                continue
            speedups.append(kt / ht)
            leaner.append(kr / hr)
            lines.append(
                f"  {pods:>7,} pods ({size / 2**20:,.0f} MiB) {form:<5}:"
                f" hpctop {ht:6.2f} s {hr / 2**20:7,.0f} MiB | kubectl {kt:6.2f} s {kr / 2**20:7,.0f} MiB"
                f" | {ratio(kt / ht, 1)} faster, {ratio(kr / hr, 1)} less memory"
            )
    growth = ""
    if len(sizes) > 1:
        parts = [
            f"{name} {1e6 * costs[0]:.0f} -> {1e6 * costs[-1]:.0f} us/pod ({ratio(costs[-1] / costs[0], 1)})"
            for name, costs in per_pod.items()
        ]
        growth = f"; cost per pod {sizes[0]:,} -> {sizes[-1]:,}: " + ", ".join(parts)
    print("\n".join(lines), file=sys.stderr)
    worst, leanest = min(speedups, default=math.inf), min(leaner, default=math.inf)
    return Verdict(
        "P8 peer",
        f"hpctop {ratio(worst, 1)}-{ratio(max(speedups, default=worst), 1)} as fast as kubectl"
        " get pods -A (json, table),"
        f" {ratio(leanest, 1)}-{ratio(max(leaner, default=leanest), 1)} less memory",
        worst > 1.0 and leanest > 1.0,
        f"{', '.join(f'{s:,}' for s in sizes)} pods, medians of {repeats or 'the warm-up, 1'}"
        " interleaved, RSS floor"
        f" {launcher.floor / 2**20:.0f} MiB{growth}{paint_note}"
        + "".join(f"; {note}" for note in killed_notes)
        + "; goal: faster and leaner at every size",
    )


def _medians_text(results: dict[str, list[tuple[float, int]]]) -> str:
    """Each side's median wall time and max RSS, as soon as a size is measured (a long run that
    is stopped keeps what it measured)."""
    parts = []
    for name, values in results.items():
        wall, rss = _median(values)
        parts.append(f"{name} {wall:.2f} s {rss / 2**20:,.0f} MiB")
    return ", ".join(parts)


def _kubectl_version() -> str:
    try:
        done = subprocess.run([KUBECTL, "version", "--client"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"version unknown: {exc}"
    return done.stdout.splitlines()[0] if done.stdout else "version unknown"


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:]] or [10_000, 50_000, 100_000, 3]
    print(run(*numbers).line())
