"""Slurm's descriptor: it watches no Kubernetes kind; its objects come from slurmrestd over HTTP.

Why a descriptor anyway: the registry lists every backend hpctop knows, with its upstream, its
fixtures and where its actions are, so ``tests/test_backends_registered.py`` holds Slurm to the
same checks as the others. The reading itself is :class:`hpctop.sources.slurm.rest.SlurmRest`
(decoded by :mod:`hpctop.backends.slurm.wire`); the reasons are Slurm's own words, passed through
as Slurm wrote them, so the backend produces none of hpctop's reason codes.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend

BACKEND = Backend(
    name="slurm",
    title="Slurm (slurmrestd)",
    upstream="https://github.com/SchedMD/slurm",
    watches=(),
    foreign_api="/slurm",  # /slurm/v0.0.4x/ and /slurmdb/v0.0.4x/
    fixtures=(
        "tests/slurm/fixtures/openapi-v0.0.42.json",
        "tests/slurm/fixtures/openapi-v0.0.44.json",
        "tests/slurm/fixtures/responses-v0.0.42.json",
        "tests/slurm/fixtures/responses-v0.0.44.json",
    ),
    reasons=frozenset(),  # Slurm's reasons (Resources, Priority, JobHeldUser) are shown as Slurm wrote them
    actions="hpctop.backends.slurm.act",
)
