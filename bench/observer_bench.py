#!/usr/bin/env python3
"""The in-process operator observer against torch.profiler on bench/torch_loop.py's CNN step,
all in one warm process (bench/observer_bench.sh runs it; docs/BENCHMARKS.md).

  observer_bench.py --lib LIB [--iters N] [--rounds R] [--warmup N] [--clock wall|cpu]
  observer_bench.py --lib LIB --wait [--iters N] [--warmup N]

Each round times ITERS iterations in each configuration, in this order:
  untraced   the loop as is (the observer's library loaded, nothing registered)
  floor      the observer's callbacks registered but returning at once (recording off):
             what libtorch's RecordFunction machinery costs with any global callback
  observer   the observer registered and recording (its rings read out between iterations,
             outside the timing, as gpuspy's reader would from another thread)
  profiler   the loop inside torch.profiler.profile(activities=[CPU]) (in-loop time only;
             leaving profile() is timed apart as exit_ms)
  shapes_floor  as floor, registered asking for inputs (gpuspy_torch_ops_set_shapes(1)):
             what libtorch's boxing of every operator's inputs costs by itself
  shapes     the observer recording with input shapes
  profiler_shapes  torch.profiler.profile(activities=[CPU], record_shapes=True)
A configuration's figure is the median iteration time of a round, and the best (lowest)
over rounds. --clock cpu times each iteration with the thread's CPU clock
(CLOCK_THREAD_CPUTIME_ID) instead of the wall clock: on a machine shared with other work,
time the loop's thread was not running is left out (the loop runs on one thread,
torch.set_num_threads(1); work of other threads, such as gpuspy's, is not counted). Operator calls per iteration are counted from the observer's records (starts),
so per-operator costs are (config - untraced) / calls. Prints one JSON object.

--wait: after the warm-up print READY, then run one configuration per line read on stdin
(untraced, floor, observer, profiler; "inprocess": wait until a recorder's attach turned the
observer on through its gpuspy:records semaphore, the control thread being started, then time
the loop; "plain": time the loop as it is, whatever is attached) and print
"RESULT <name> median=<us> ops=<RecordFunction starts per iteration, 0 if unknown>", then
LOOP_DONE; "exit" or the end of input ends. bench/observer_bench.sh attaches gpuspy between
commands."""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# the observer's ctypes binding, the tests' own (tests/targets/torch/observer_abi.py)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "targets", "torch"))
import torch  # noqa: E402
import torch_loop  # noqa: E402
from observer_abi import Op, addresses, init, libtorch_path, open_observer, stats  # noqa: E402

def observer(path):
    lib = open_observer(path)
    rc, why = init(lib, addresses(ctypes.CDLL(libtorch_path(), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)))
    if rc:
        raise SystemExit("observer_bench: " + why)
    return lib


def serve(lib, configs, loop, iters):
    if lib.gpuspy_torch_ops_start_gate():
        raise SystemExit("observer_bench: no control thread")
    print("READY", flush=True)
    seen = stats(lib).enables  # enables up to the end of the last command
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "exit":
            break
        ops = 0
        if cmd in configs:
            times, info = configs[cmd]()
            ops = info.get("ops_per_iter", 0)
        elif cmd == "inprocess":
            # the attach turns it on within 40 ms, maybe before this command came
            end = time.monotonic() + 10
            while stats(lib).enables == seen:
                if time.monotonic() > end:
                    raise SystemExit("observer_bench: the recorder did not turn it on")
                time.sleep(0.005)
            base = stats(lib).recorded
            times = loop()
            ops = (stats(lib).recorded - base) / 2 / iters
        else:
            times = loop()
        seen = stats(lib).enables
        print("RESULT %s median=%.1f ops=%.1f" % (cmd, statistics.median(times) * 1e6, ops),
              flush=True)
        print("LOOP_DONE", flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--wait", action="store_true")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch_loop.Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(16, 1, 16, 16)
    y = torch.randint(0, 10, (16,))
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter

    def timed_loop(model, opt, x, y, iters):
        times = []
        for _ in range(iters):
            t0 = clock()
            torch_loop.step(model, opt, x, y)
            times.append(clock() - t0)
        return times

    timed_loop(model, opt, x, y, args.warmup)
    lib = observer(args.lib)
    buf = (Op * 8192)()

    def drain():
        starts = 0
        while True:
            n = lib.gpuspy_torch_ops_read(buf, len(buf))
            starts += sum(1 for r in buf[:n] if r.kind == 1)
            if n < len(buf):
                return starts

    def untraced():
        return timed_loop(model, opt, x, y, args.iters), {}

    def floor(shapes=0):
        lib.gpuspy_torch_ops_set_shapes(shapes)
        lib.gpuspy_torch_ops_enable()
        lib.gpuspy_torch_ops_set_recording(0)
        times = timed_loop(model, opt, x, y, args.iters)
        lib.gpuspy_torch_ops_disable()
        lib.gpuspy_torch_ops_set_shapes(0)
        return times, {}

    def observed(shapes=0):
        times, starts = [], 0
        drain()
        if lib.gpuspy_torch_ops_set_shapes(shapes):
            raise SystemExit("observer_bench: input shapes not available")
        lib.gpuspy_torch_ops_enable()
        for _ in range(args.iters):
            t0 = clock()
            torch_loop.step(model, opt, x, y)
            times.append(clock() - t0)
            t1 = time.perf_counter()
            starts += drain()
            drain_s = time.perf_counter() - t1
        lib.gpuspy_torch_ops_disable()
        lib.gpuspy_torch_ops_set_shapes(0)
        starts += drain()
        return times, {"ops_per_iter": starts / args.iters, "last_drain_us": drain_s * 1e6}

    def profiled(shapes=False):
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes) as prof:
            times = timed_loop(model, opt, x, y, args.iters)
            t0 = time.perf_counter()
        exit_ms = (time.perf_counter() - t0) * 1e3
        del prof
        return times, {"exit_ms": exit_ms}

    configs = {"untraced": untraced, "floor": floor, "observer": observed,
               "profiler": profiled, "shapes_floor": lambda: floor(1),
               "shapes": lambda: observed(1), "profiler_shapes": lambda: profiled(True)}
    if args.wait:
        return serve(lib, configs, lambda: timed_loop(model, opt, x, y, args.iters),
                     args.iters)
    best = {k: None for k in configs}
    extra = {k: {} for k in configs}
    for _ in range(args.rounds):
        for name, fn in configs.items():
            times, info = fn()
            med = statistics.median(times) * 1e6
            if best[name] is None or med < best[name]:
                best[name] = med
            for k, v in info.items():
                extra[name].setdefault(k, []).append(v)
    ops = max(extra["observer"]["ops_per_iter"])
    out = {"iters": args.iters, "rounds": args.rounds, "ops_per_iter": ops,
           "iter_us": best,
           "ratio": {k: best[k] / best["untraced"] for k in configs},
           "added_ns_per_op": {k: (best[k] - best["untraced"]) * 1e3 / ops for k in configs
                               if k != "untraced"},
           "profiler_exit_ms": min(extra["profiler"]["exit_ms"]),
           "profiler_shapes_exit_ms": min(extra["profiler_shapes"]["exit_ms"]),
           "observer_read_us_per_iter": min(extra["observer"]["last_drain_us"])}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
