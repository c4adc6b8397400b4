#!/usr/bin/env python3
"""A small CNN training loop on the CPU (fixed seed, a batch of 16 synthetic 16x16 images), for
bench/ops_bench.sh: how much a profiler slows it down and how long its operator table takes.

  torch_loop.py [--iters N] [--warmup N] [--mode plain|profiler] [--wait] [--threads N]

--mode plain      the loop as is
--mode profiler   the timed loop inside torch.profiler.profile(activities=[CPU]), then
                  key_averages().table() printed to stderr; TABLE_MS is the time from the loop's
                  last iteration to the table printed (leaving profile() included: that is where
                  torch.profiler does its post-processing)
--wait            after the warm-up print READY, then read commands on stdin: "go" runs the
                  timed loop and prints its line and LOOP_DONE, "profile" the same inside
                  torch.profiler (as --mode profiler), "exit" (or the end of input) exits. A tracer can attach before a loop and stop after it with the process
                  alive, and several configurations can be timed in one warm process

Prints on stdout:  ITER_US median=<us> mean=<us> min=<us> iters=<n>   (per training iteration)
                   TABLE_MS=<ms>                                       (profiler mode)"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3, padding=1)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def timed_loop(model, opt, x, y, iters):
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        step(model, opt, x, y)
        times.append(time.perf_counter() - t0)
    return times


def commands():
    """The commands of --wait, until "exit" or the end of input: any other line ("go") runs a
    timed loop."""
    for line in sys.stdin:
        if line.strip() == "exit":
            return
        yield line.strip()


def report(times, table_ms):
    us = [t * 1e6 for t in times]
    print("ITER_US median=%.1f mean=%.1f min=%.1f iters=%d"
          % (statistics.median(us), statistics.mean(us), min(us), len(us)), flush=True)
    if table_ms is not None:
        print("TABLE_MS=%.1f" % table_ms, flush=True)


def run(mode, args, model, opt, x, y):
    """One timed loop; returns its iteration times and, in profiler mode, TABLE_MS."""
    if mode == "plain":
        return timed_loop(model, opt, x, y, args.iters), None
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        times = timed_loop(model, opt, x, y, args.iters)
        loop_end = time.perf_counter()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20),
          file=sys.stderr, flush=True)
    return times, (time.perf_counter() - loop_end) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--mode", choices=("plain", "profiler"), default="plain")
    ap.add_argument("--wait", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(16, 1, 16, 16)
    y = torch.randint(0, 10, (16,))
    timed_loop(model, opt, x, y, args.warmup)
    if not args.wait:
        report(*run(args.mode, args, model, opt, x, y))
        return 0
    print("READY", flush=True)
    for command in commands():
        report(*run("profiler" if command == "profile" else args.mode, args, model, opt, x, y))
        print("LOOP_DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
