#!/usr/bin/python3.11
"""A small deterministic CPU training loop, the oracle for gpuspy's operator tables.

    train_loop.py [--iters N] [--go FIFO] [--throw]
    train_loop.py [--iters N] --oracle COUNTS.json [--oracle-averages AVERAGES.json]
                  [--oracle-shapes SHAPES.json]

Builds a conv2d/relu/linear model with a fixed seed and fixed data, runs two warm-up
iterations (first-call initialisation is not part of what is compared), prints READY, waits for
a line on the FIFO given by --go (so a tracer can attach first; no sleep guesses), runs N
iterations and prints "DONE <N>". It then waits for a second line on the FIFO before exiting,
so a tracer attached with -p can be stopped while nothing else runs. Without --go it runs on
at once and exits after DONE.

With --throw each iteration also calls torch.mm on shapes that do not fit, which throws a C++
exception (c10::Error) out of at::_ops::mm::call, caught in Python as a RuntimeError.

With --oracle the same N iterations run under torch.profiler (CPU activities) and the call
count of every RecordFunction event it recorded is written as {name: count}: the profiler's
events as recorded, before key_averages() post-processes them. key_averages() drops an event
whose parent, found by comparing microsecond timestamps, has the same name and no other child
(profiler_util.py's _remove_dup_nodes): back-to-back calls of a sub-microsecond operator such
as aten::zero_ get merged at random, so its counts there vary from run to run. Its rows are
written by --oracle-averages as {name: {"count": N, "self_cpu_us": T}}, and its table is
printed on stderr.
With --oracle-shapes the profiler records input shapes (record_shapes=True), and per name how
often each shapes text came ({name: {"[[16, 3, 16, 16], ...]": N}}) is written there.
"""
import argparse
import collections
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.fc = nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.fc(torch.flatten(x, 1))


def make():
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one thread: the same operator calls on every run
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(16, 3, 16, 16)
    target = torch.randint(0, 10, (16,))
    return model, opt, data, target


def step(model, opt, data, target):
    opt.zero_grad()
    loss = F.cross_entropy(model(data), target)
    loss.backward()
    opt.step()


def throw_once():
    try:
        torch.mm(torch.ones(2, 3), torch.ones(2, 3))
    except RuntimeError:
        pass


def run(n, state, throw=False):
    for _ in range(n):
        step(*state)
        if throw:
            throw_once()


def oracle(args, state):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU],
                 record_shapes=bool(args.oracle_shapes)) as prof:
        run(args.iters, state)
    events = prof.profiler.kineto_results.events()
    counts = collections.Counter(e.name() for e in events)
    with open(args.oracle, "w") as f:
        json.dump(counts, f, indent=1, sort_keys=True)
    if args.oracle_shapes:
        shapes = collections.defaultdict(collections.Counter)
        for e in events:
            shapes[e.name()][str(e.shapes())] += 1
        with open(args.oracle_shapes, "w") as f:
            json.dump(shapes, f, indent=1, sort_keys=True)
    averages = prof.key_averages()
    if args.oracle_averages:
        rows = {e.key: {"count": e.count, "self_cpu_us": e.self_cpu_time_total}
                for e in averages}
        with open(args.oracle_averages, "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
    print(averages.table(sort_by="self_cpu_time_total", row_limit=12), file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--go", help="FIFO to read a line from before the loop and before exiting")
    p.add_argument("--oracle", help="run under torch.profiler and write {op: count} here")
    p.add_argument("--oracle-averages", help="also write key_averages()'s rows here")
    p.add_argument("--oracle-shapes", help="with record_shapes=True: {op: {shapes: count}} here")
    p.add_argument("--throw", action="store_true", help="one C++ exception per iteration")
    args = p.parse_args()

    state = make()
    run(2, state)  # warm-up: lazy initialisation happens here, not in the compared loop
    if args.oracle:
        oracle(args, state)
        return
    print("READY", flush=True)
    # opened once: the writer keeps its end open between the two lines. Read-write, so that
    # the wait is a read() and not an open() (which blocks until a writer comes): a read is
    # where gpuspy may borrow the thread to load its operator observer, an open is not.
    go = os.fdopen(os.open(args.go, os.O_RDWR)) if args.go else None
    if go:
        go.readline()
    run(args.iters, state, args.throw)
    print("DONE %d" % args.iters, flush=True)
    if go:
        go.readline()


if __name__ == "__main__":
    main()
