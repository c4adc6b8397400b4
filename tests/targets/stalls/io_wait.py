#!/usr/bin/python3
"""io_wait: every step waits for the disk, uninterruptibly.

    io_wait.py [--steps N] [--reads R] [--dir DIR]

Writes a 64 MiB file of 1 MiB records in DIR (default: a temporary directory; it must be on a
block device: O_DIRECT fails on tmpfs), syncs it and drops it from the page cache. Each step
then reads R (default 96) random records with O_DIRECT, as a dataset reader that bypasses the
page cache does: no read can be served from memory, so each one puts the main thread to sleep
in D state (TASK_UNINTERRUPTIBLE) until the disk has answered. A checksum byte per record is
all the CPU work.

How long a step takes is the disk's business: about 0.8 ms a read here (a virtual disk that its
host caches), so about 80 ms a step, nearly all of it in preadv2 and about 90% of it off CPU in
D state (the rest is the kernel's CPU time issuing each read; smaller reads spend more of it:
at 4 KiB only about half the time is D). cause_ns is the time measured around the reads.
Prints the STEP and TRUTH lines (truth.py). About 1.1 s for 12 steps.
"""
import argparse
import mmap
import os
import random
import sys
import tempfile
import time

import truth

FILE_BYTES = 64 << 20
RECORD = 1 << 20  # O_DIRECT needs offsets, sizes and buffers aligned to the logical block size


def make_record_file(path):
    """Writes the file, waits for it to reach the disk, and evicts it from the page cache."""
    block = bytes(range(256)) * (1 << 12)  # 1 MiB
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(FILE_BYTES // len(block)):
            os.write(fd, block)
        os.fsync(fd)  # dirty pages cannot be dropped
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_records(fd, buf, offsets):
    """Reads one record per offset, straight from the disk; returns a checksum."""
    total = 0
    for offset in offsets:
        os.preadv(fd, [buf], offset)  # stall: O_DIRECT read, the thread sleeps in D state
        total += buf[0]
    return total


def train(fd, buf, steps, reads, log, timer):
    """Each step: a batch of random records from the disk, and a line of metrics logged.

    The log line is what a training loop does besides reading; it also shows the loop to a
    tracer that sees the loop only through its events: with every event in one call of
    read_records, the loop's own lines would never come back."""
    rng = random.Random(0)
    records = FILE_BYTES // RECORD
    for step in range(steps):
        timer.begin()
        offsets = [rng.randrange(records) * RECORD for _ in range(reads)]
        t0 = time.monotonic_ns()
        checksum = read_records(fd, buf, offsets)
        timer.add_cause(time.monotonic_ns() - t0)
        log.write(b"step %d checksum %d\n" % (step, checksum))
        timer.end()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--reads", type=int, default=96, help="1 MiB reads per step")
    parser.add_argument("--dir", help="where to put the 64 MiB file (a block device)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuspy-io-wait-", dir=args.dir) as directory:
        path = os.path.join(directory, "records.bin")
        make_record_file(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        except OSError as e:
            print("FAIL O_DIRECT open of %s: %s (tmpfs? use --dir)" % (path, e), file=sys.stderr)
            return 1
        buf = mmap.mmap(-1, RECORD)  # page-aligned, as O_DIRECT requires
        try:
            timer = truth.StepTimer()
            # unbuffered: one write() a line, as a log flushed every step
            with open(os.path.join(directory, "metrics.log"), "wb", buffering=0) as log:
                train(fd, buf, args.steps, args.reads, log, timer)
        finally:
            os.close(fd)
        truth.emit("io_wait", timer, truth.site(read_records),
                   "preadv2 (os.preadv) of 1 MiB with O_DIRECT on %s" % path, train,
                   file=path, reads_per_step=args.reads, syscall="preadv2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
