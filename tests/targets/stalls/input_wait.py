#!/usr/bin/python3
"""input_wait: a training loop starved by its DataLoader.

    input_wait.py [--steps N]

A real torch.utils.data.DataLoader (num_workers=2, batches of 4) over a Dataset whose samples
are files that are slow to read: each sample is a named pipe (shard-NN in a temporary
directory) that a feeder process fills one sample every 25 ms, in two halves. The workers
therefore block in read() on .../shard-NN, and the main thread, whose training step (a small
linear model, forward, backward, SGD) takes a millisecond or two, waits in the DataLoader's
__next__ (its result queue) for over 95% of every step.

Prints the STEP lines and the TRUTH line (truth.py): "where" is the main thread's wait,
"cause" the workers' read(), with the workers' and the feeder's pids. Runs about 1.2 s for
12 steps, plus torch's import (about 2 s in all).
"""
import argparse
import os
import sys
import tempfile
import time

import torch
from torch.utils.data import DataLoader, Dataset

import truth

BATCH = 4
WORKERS = 2
SAMPLE_BYTES = 16 * 1024  # below a pipe's 64 KiB: the feeder's writes never block
PIECES = 2  # each sample arrives in halves, so a worker blocks in read() twice per sample
SAMPLE_INTERVAL_NS = 25_000_000  # one sample per 25 ms: a batch of 4 every 100 ms


def shard_path(directory, index):
    return os.path.join(directory, "shard-%02d" % index)


def read_sample(path):
    """A worker's read of one sample: blocks in read() until the feeder has written it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        data = bytearray()
        while len(data) < SAMPLE_BYTES:
            piece = os.read(fd, SAMPLE_BYTES - len(data))  # cause: blocks until the feeder writes
            if not piece:
                raise EOFError(path)
            data += piece
    finally:
        os.close(fd)
    return torch.frombuffer(data, dtype=torch.uint8).float() / 255.0


class ShardDataset(Dataset):
    """One sample per shard file, read when a worker asks for it."""

    def __init__(self, directory, count):
        self.directory = directory
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        return read_sample(shard_path(self.directory, index))


def feed(directory, count, go_fd, ready_fd):
    """The feeder process: writes sample k, half at a time, at k * SAMPLE_INTERVAL_NS after go.

    It opens every pipe read-write first: that never blocks, keeps each pipe alive until the
    end, and lets the workers' O_RDONLY opens return at once, so they block in read() and not in
    open()."""
    fds = [os.open(shard_path(directory, i), os.O_RDWR) for i in range(count)]
    os.write(ready_fd, b"r")
    os.read(go_fd, 1)
    start = time.monotonic_ns()
    piece_ns = SAMPLE_INTERVAL_NS // PIECES
    piece_bytes = SAMPLE_BYTES // PIECES
    for k, fd in enumerate(fds):
        for p in range(PIECES):
            due = start + k * SAMPLE_INTERVAL_NS + (p + 1) * piece_ns
            delay = due - time.monotonic_ns()
            if delay > 0:
                time.sleep(delay / 1e9)
            os.write(fd, bytes([k % 251]) * piece_bytes)
    # the last samples may not have been read yet: keep the pipes until the main process is done
    os.read(go_fd, 1)


def start_feeder(directory, count):
    """Forks the feeder (before any DataLoader worker exists); returns (pid, go_fd)."""
    go_r, go_w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(go_w)
        os.close(ready_r)
        try:
            feed(directory, count, go_r, ready_w)
        finally:
            os._exit(0)
    os.close(go_r)
    os.close(ready_w)
    os.read(ready_r, 1)
    os.close(ready_r)
    return pid, go_w


def train(batches, model, optimizer, steps, timer):
    """The training loop: each step waits for a batch, then a tiny forward/backward/update."""
    for step in range(steps):
        timer.begin()
        t0 = time.monotonic_ns()
        batch = next(batches)  # stall: the main thread waits for a worker's batch here
        timer.add_cause(time.monotonic_ns() - t0)
        loss = model(batch).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        timer.end()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)  # no intra-op thread pool: the main thread's CPU time stays its own

    with tempfile.TemporaryDirectory(prefix="gpuspy-input-wait-") as directory:
        count = args.steps * BATCH
        for i in range(count):
            os.mkfifo(shard_path(directory, i))
        feeder_pid, go_fd = start_feeder(directory, count)
        loader = DataLoader(ShardDataset(directory, count), batch_size=BATCH,
                            num_workers=WORKERS, shuffle=False)
        model = torch.nn.Linear(SAMPLE_BYTES, 16)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        batches = iter(loader)  # starts the workers: they block on the first shards at once
        worker_pids = [w.pid for w in batches._workers]  # private, but how else to name them
        os.write(go_fd, b"g")
        timer = truth.StepTimer()
        train(batches, model, optimizer, args.steps, timer)
        del batches  # stops the workers
        os.write(go_fd, b"d")
        os.close(go_fd)
        os.waitpid(feeder_pid, 0)

        cause = truth.site(read_sample, "cause")
        cause["what"] = "read() on %s (named pipes)" % os.path.join(directory, "shard-NN")
        cause["pids"] = worker_pids
        truth.emit("input_wait", timer, truth.site(train),
                   "DataLoader __next__: the main thread waits on the workers' result queue",
                   train, cause=cause, worker_pids=worker_pids, feeder_pid=feeder_pid,
                   batch_size=BATCH, data_dir=directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
