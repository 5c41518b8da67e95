"""Ctrl-C, exit and threads during comm= calls, at 2 ranks (run under mpirun).

  mpi_interrupts.py rk4_one_rank | rk4_every_rank | rk4_exit | gram_circulant | gram_slices | threads

Every case must end on every rank, with the same call stopped on all of them:
the signalled rank raises KeyboardInterrupt, the others a RuntimeError that
names the interrupt, within seconds; afterwards both ranks compute together
again (the collectives still line up). A hang is the test's timeout."""
import os
import signal
import sys
import threading
import time

from mpi4py import MPI
import numpy as np

import kmini

COMM = MPI.COMM_WORLD
RANK, RANKS = COMM.Get_rank(), COMM.Get_size()
LONG_RK4 = dict(steps=10**6, dt=1e-9, g=1e-6, method="stages")
SIGNAL_AFTER = 0.5  # seconds into the call
STOP_WITHIN = 5.0   # seconds after the signal


def say(*words):
    print(f"[rank {RANK}]", *words, flush=True)


def interrupt_later(seconds=SIGNAL_AFTER):
    threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT)).start()


def outcome_of(call):
    """What stopped call (KeyboardInterrupt, RuntimeError: ..., finished) and after how many seconds; a signal
    still pending when the call returned (caught by the outer handler) is reported too."""
    start = time.monotonic()
    what, seconds = "finished", None
    try:
        try:
            call()
        except KeyboardInterrupt:
            what = "KeyboardInterrupt"
        except RuntimeError as e:
            what = f"RuntimeError: {e}"
        seconds = time.monotonic() - start
        time.sleep(0.2)  # a pending signal arrives here
    except KeyboardInterrupt:  # also where it lands between the call's end and the clock
        what += " (then KeyboardInterrupt)"
    return what, time.monotonic() - start if seconds is None else seconds


def fields(n=4096, seed=0):
    rng = np.random.default_rng(seed + RANK)
    return rng.random(n) + 1j * rng.random(n), np.full(n, 0.25 + 0j)


def still_together():
    """A short rk4 over both ranks equals the one-process integration of the whole field."""
    F0, G0 = fields(64, seed=7)
    F, _, delta = kmini.rk4(F0, G0, steps=20, dt=1e-3, g=1e-3, comm=COMM)
    every_F0 = COMM.allgather(F0)
    every_G0 = COMM.allgather(G0)
    F1, _, delta1 = kmini.rk4(np.concatenate(every_F0), np.concatenate(every_G0), steps=20, dt=1e-3, g=1e-3)
    np.testing.assert_allclose(delta, delta1, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(F, F1[64 * RANK:64 * (RANK + 1)], rtol=1e-12, atol=1e-14)


def check_stopped(what, seconds, signalled):
    say(what, f"after {seconds:.2f} s")
    if signalled:
        assert what.startswith("KeyboardInterrupt"), what
    else:
        assert what.startswith("RuntimeError") and "interrupted" in what, what
    assert seconds < SIGNAL_AFTER + STOP_WITHIN, f"stopped only after {seconds:.2f} s"


def rk4_interrupted(signalled_ranks):
    F0, G0 = fields()
    if RANK in signalled_ranks:
        interrupt_later()
    what, seconds = outcome_of(lambda: kmini.rk4(F0, G0, comm=COMM, **LONG_RK4))
    if len(signalled_ranks) == RANKS:  # every rank was signalled: each ends with its KeyboardInterrupt
        say(what, f"after {seconds:.2f} s")
        assert "KeyboardInterrupt" in what, what
        assert seconds < SIGNAL_AFTER + STOP_WITHIN, f"stopped only after {seconds:.2f} s"
    else:
        check_stopped(what, seconds, RANK in signalled_ranks)
    still_together()


def rk4_exit():
    """Rank 0's interpreter exits while a daemon thread is inside rk4(comm=): that call stops on every rank
    (RuntimeError on rank 1, whose main thread is in the call) and both processes end."""
    F0, G0 = fields()
    if RANK == 0:
        started = threading.Event()

        def inside():
            started.set()
            kmini.rk4(F0, G0, comm=COMM, **LONG_RK4)

        threading.Thread(target=inside, daemon=True).start()
        started.wait()
        time.sleep(SIGNAL_AFTER)
        say("exiting")
        return
    what, seconds = outcome_of(lambda: kmini.rk4(F0, G0, comm=COMM, **LONG_RK4))
    say(what, f"after {seconds:.2f} s")
    assert what.startswith("RuntimeError") and "interrupted" in what, what


def big_gram_block(rows=40000, cols=8192):
    """This rank's block of a random 0/1 matrix as uint64 words (cols=), large enough to run for seconds."""
    mine = rows // RANKS
    words = np.random.default_rng(RANK).integers(0, 2**63, size=(mine, cols // 64), dtype=np.uint64)
    return words, cols


def gram_interrupted(schedule):
    A, cols = big_gram_block()
    if RANK == 0:
        interrupt_later()
    what, seconds = outcome_of(lambda: kmini.gram(A, cols=cols, top_k=5, dense=False, comm=COMM, slice_rows=1024,
                                                  distribution="ring", ring_schedule=schedule))
    check_stopped(what, seconds, RANK == 0)
    still_together()


def threads(rounds=12):
    """Two threads per rank, each with its own communicator, calling rk4 and gram over the ranks at once,
    round after round: every result is the one-thread result (a deadlock is the test's timeout)."""
    F0, G0 = fields(256, seed=3)
    A = np.random.default_rng(11 + RANK).random((40, 300)) < 0.4
    want_rk4 = kmini.rk4(F0, G0, steps=200, dt=1e-3, g=1e-4, comm=COMM)
    want_gram = kmini.gram(A, similarity="jaccard", top_k=3, comm=COMM)
    comms = [COMM.Dup() for _ in range(2)]
    failures = []

    def work(comm, which):
        try:
            for _ in range(rounds):
                if which == 0:
                    got = kmini.rk4(F0, G0, steps=200, dt=1e-3, g=1e-4, comm=comm)
                    for x, y in zip(got, want_rk4):
                        np.testing.assert_array_equal(x, y)
                else:
                    got = kmini.gram(A, similarity="jaccard", top_k=3, comm=comm)
                    np.testing.assert_array_equal(got.C, want_gram.C)
                    np.testing.assert_array_equal(got.top_k, want_gram.top_k)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(repr(e))

    # Each rank starts its threads in another order, the pattern that deadlocked.
    order = [0, 1] if RANK % 2 == 0 else [1, 0]
    ts = [threading.Thread(target=work, args=(comms[w], w)) for w in order]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not failures, failures
    for c in comms:
        c.Free()
    say(f"{rounds} rounds of two threads, each result exact")


CASES = {
    "rk4_one_rank": lambda: rk4_interrupted({0}),
    "rk4_every_rank": lambda: rk4_interrupted(set(range(RANKS))),
    "rk4_exit": rk4_exit,
    "gram_circulant": lambda: gram_interrupted("circulant"),
    "gram_slices": lambda: gram_interrupted("slices"),
    "threads": threads,
}

if __name__ == "__main__":
    if RANKS < 2:
        print("needs 2 ranks or more")
        sys.exit(77)
    CASES[sys.argv[1]]()
    say("done")
