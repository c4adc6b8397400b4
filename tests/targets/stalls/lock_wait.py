#!/usr/bin/python3
"""lock_wait: the step loop blocks on a lock another thread holds most of the time.

    lock_wait.py [--steps N]

A background thread named "checkpointer" repeatedly takes state_lock (a threading.Lock) and
keeps it for 80 ms while it "writes a snapshot" (it sleeps: a slow write, with the GIL
released); it lets go only until the training loop has published one step's result. Each
training step computes for about 10 ms and then needs the lock to publish its result: by then
the checkpointer holds it again, so the step blocks in the lock's acquire (a futex wait, GIL
released) for the rest of the 80 ms. The checkpointer says when it holds the lock (`holding`),
and the loop waits for that before its acquire: on a loaded machine the checkpointer may not
have run within those 10 ms, and a step that found the lock free would not block at all. A step lasts one checkpointer period plus the handover,
about 87 ms, of which about 85% is spent waiting for the lock.

Prints the STEP and TRUTH lines (truth.py): "where" is the main thread's acquire, "cause" the
holder's function and thread id; cause_ns is the time measured around the acquire. About 1 s
for 12 steps.
"""
import argparse
import sys
import threading
import time

import truth

HOLD_S = 0.080
COMPUTE_ITERATIONS = 150_000  # about 10 ms of CPython here

state_lock = threading.Lock()


def save_snapshot(stop, published, holding, holder):
    """The checkpointer: holds state_lock for HOLD_S, lets the loop publish one step, again.

    Waiting for the step to be published makes the handover deterministic: without it, which
    thread gets the lock next would depend on when the GIL changes hands."""
    holder["tid"] = threading.get_native_id()
    with state_lock:
        holding.set()
        time.sleep(HOLD_S)
        holding.clear()
    while not stop.is_set():
        published.wait()
        published.clear()
        with state_lock:
            holding.set()
            time.sleep(HOLD_S)  # cause: the slow write, done with state_lock held
            holding.clear()


def compute(step):
    """The step's own work, done without the lock."""
    acc = step
    for i in range(COMPUTE_ITERATIONS):
        acc = (acc * 1103515245 + i) & 0xFFFFFFFF
    return acc


def train(state, published, holding, steps, timer):
    """Each step: compute, then publish the result under state_lock."""
    for step in range(steps):
        timer.begin()
        result = compute(step)
        t0 = time.monotonic_ns()
        holding.wait()  # the checkpointer has the lock (it may not have run yet when loaded)
        with state_lock:  # stall: blocks while the checkpointer holds the lock
            timer.add_cause(time.monotonic_ns() - t0)
            state["step"] = step
            state["result"] = result
        published.set()
        timer.end()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    stop = threading.Event()
    published = threading.Event()
    holding = threading.Event()
    holder = {}
    checkpointer = threading.Thread(target=save_snapshot,
                                    args=(stop, published, holding, holder), name="checkpointer")
    checkpointer.start()
    holding.wait()  # the first step finds the lock taken, like every other
    timer = truth.StepTimer()
    try:
        train({}, published, holding, args.steps, timer)
    finally:
        stop.set()
        published.set()
        checkpointer.join()
    cause = truth.site(save_snapshot, "cause")
    cause["what"] = "state_lock held by thread checkpointer while it sleeps (a slow write)"
    cause["tid"] = holder["tid"]
    truth.emit("lock_wait", timer, truth.site(train),
               "threading.Lock state_lock: futex wait in acquire, held by thread checkpointer",
               train, cause=cause, holder_tid=holder["tid"], holder_thread="checkpointer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
