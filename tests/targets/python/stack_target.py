"""Python stacks with a known answer, the oracle for gpuspy's stack capture.

    stack_target.py GO_FIFO ORACLE_JSON [--deep N] [--busy SECONDS] [--fork]

Runs on CPython 3.8 and later (stdlib only). Prints READY, blocks until a line arrives on
GO_FIFO (so a tracer attaches first), then sleeps 5 ms (time.sleep: the GIL released, a
syscall long enough to be a span) from each of these contexts:

  method     Model.forward, called through Model.__call__
  generator  a generator's body, twice, driven by list()
  thread     a worker thread's function, through threading's bootstrap frames
  callback   a key function sorted() calls from C, once per element (3 times)
  deep       a recursion N frames deep (default 40; more than 128 exceeds gpuspy's limit)

Each sleep writes its oracle: the thread's kernel tid, the CLOCK_MONOTONIC interval around
the sleep, the frames leaf first (co_qualname where the version has it, else co_name; file;
line, read on the sleep's own line) and traceback.extract_stack()'s (name, file, line).
With --busy it then spins in busy_loop for SECONDS (CPU samples), recorded the same way.
With --fork a forked child then sleeps once ("fork") and writes its own ORACLE_JSON.fork.
It writes ORACLE_JSON, prints DONE and stays alive (the child too) until GO_FIFO is opened
and closed again, so the tracer can stop while the code objects it names still exist.
"""
import json
import os
import sys
import threading
import time
import traceback

SLEEP_S = 0.005
records = []
records_lock = threading.Lock()


def frames_of(frame):
    out = []
    while frame is not None:
        code = frame.f_code
        out.append({"qualname": getattr(code, "co_qualname", code.co_name),
                    "file": code.co_filename, "line": frame.f_lineno})
        frame = frame.f_back
    return out


def extracted():
    return [{"name": s.name, "file": s.filename, "line": s.lineno}
            for s in reversed(traceback.extract_stack(sys._getframe(1)))]


def note(what, t0, t1, frames, tb):
    with records_lock:
        records.append({"what": what, "tid": threading.get_native_id(),
                        "t0": t0, "t1": t1, "frames": frames, "extracted": tb})


def probe(what):
    # the oracle is read on the sleep's line, so the leaf frame's line is the sleep's
    fr = frames_of(sys._getframe()); tb = extracted(); t0 = time.monotonic_ns(); time.sleep(SLEEP_S); t1 = time.monotonic_ns()  # noqa: E702,E501
    note(what, t0, t1, fr, tb)


class Model:
    def forward(self):
        probe("method")

    def __call__(self):
        return self.forward()


def generator():
    for i in range(2):
        probe("generator")
        yield i


def worker():
    probe("thread")


def key_function(x):
    probe("callback")
    return -x


def recurse(n):
    if n <= 1:
        probe("deep")
        return
    recurse(n - 1)


def busy_loop(seconds):
    fr = frames_of(sys._getframe()); tb = extracted(); t0 = time.monotonic_ns(); end = t0 + int(seconds * 1e9)  # noqa: E702,E501
    while time.monotonic_ns() < end:
        pass
    note("busy", t0, time.monotonic_ns(), fr, tb)


def wait_for_line(go):
    with open(go) as f:
        f.readline()


def forked_child(go, oracle):
    records.clear()
    probe("fork")
    with open(oracle + ".fork", "w") as f:
        json.dump(records, f)
    wait_for_line(go)
    os._exit(0)


def fork(go, oracle):
    pid = os.fork()
    if pid == 0:
        forked_child(go, oracle)
    while not os.path.exists(oracle + ".fork"):
        time.sleep(0.01)
    return pid


def run(deep, busy):
    Model()()
    list(generator())
    t = threading.Thread(target=worker, name="stack-worker")
    t.start()
    t.join()
    sorted([1, 2, 3], key=key_function)
    recurse(deep)
    if busy:
        busy_loop(busy)


def main():
    args = sys.argv[1:]
    go, oracle = args[0], args[1]
    deep = int(args[args.index("--deep") + 1]) if "--deep" in args else 40
    busy = float(args[args.index("--busy") + 1]) if "--busy" in args else 0
    print("READY", flush=True)
    wait_for_line(go)
    run(deep, busy)
    child = fork(go, oracle) if "--fork" in args else 0
    with open(oracle, "w") as f:
        json.dump(records, f)
    print("DONE", flush=True)
    wait_for_line(go)
    if child:
        os.waitpid(child, 0)


if __name__ == "__main__":
    main()
