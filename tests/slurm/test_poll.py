"""Polling slurmrestd: the interval, backoff on failure, a stale note, and recovery.

slurmrestd is the recorded v0.0.44 one; "down" is a port nothing listens on, "refusing" a wrong
token (the recorded server answers 401, as ``rest_auth/jwt`` does). The clock is the test's, and
the jitter is fixed at its lowest (``rng`` 0), so the waits are client-go's steps: 0.8, 1.6, 3.2 s.
"""

from __future__ import annotations

from hpctop.sources.kube.backoff import Backoff
from hpctop.sources.slurm.poll import SlurmPoller
from hpctop.sources.slurm.rest import SlurmRest
from tests.slurm.realslurm import free_port
from tests.slurm.recorded import TOKEN, RecordedSlurm


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_polls_on_the_interval_backs_off_when_down_and_recovers() -> None:
    clock = Clock()
    with RecordedSlurm("v0.0.44") as server:
        client = SlurmRest(server.url, user="alice", token=TOKEN, timeout=2)
        poller = SlurmPoller(
            client,
            interval=10,
            clock=clock,
            wall=lambda: 1798761600.0,
            backoff=Backoff(clock=clock, rng=lambda: 0.0),
        )
        view = poller.poll()
        assert (len(view.jobs), len(view.nodes), len(view.partitions), view.stale) == (5, 5, 2, False)
        reads = len(server.seen)
        clock.now += 9
        assert poller.poll() is view and len(server.seen) == reads  # not due: nothing asked
        clock.now += 1
        poller.poll()
        assert len(server.seen) > reads
        client.url = f"http://127.0.0.1:{free_port()}"  # slurmrestd goes away
        waits = []
        for _ in range(3):
            clock.now = poller.next_at
            view = poller.poll()
            waits.append(round(poller.next_at - clock.now, 3))
        assert waits == [0.8, 1.6, 3.2]
        assert view.stale and len(view.jobs) == 5  # the last good rows are kept, marked stale
        assert view.note.startswith("Slurm rows stale (00:00:00): slurmrestd failed (slurmrestd unreachable")
        assert "retrying in 3 s" in view.note and "\n" not in view.note
        client.url = server.url  # back
        clock.now = poller.next_at
        view = poller.poll()
        assert not view.stale and view.note == "" and poller.failures == 0


def test_a_refused_token_waits_the_cap_at_once() -> None:
    clock = Clock()
    with RecordedSlurm("v0.0.44") as server:
        client = SlurmRest(server.url, user="alice", token="wrong")
        poller = SlurmPoller(client, clock=clock, backoff=Backoff(clock=clock, rng=lambda: 0.0))
        view = poller.poll()
        asked = len(server.seen)
        assert view.stale and view.jobs == () and "never read" in view.note
        assert "refuses the token" in view.note and "401" in view.note
        assert poller.next_at - clock.now == 30.0
        clock.now += 29
        poller.poll()
        assert len(server.seen) == asked  # no hammering while the token is refused
