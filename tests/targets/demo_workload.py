#!/usr/bin/env python3
"""The demo workload: a toy training loop fed by data-loader worker processes.

Two worker processes (like torch DataLoader workers) read sample files from disk and send
batches through a multiprocessing queue; the main process "trains" on each batch (CPU work)
and, when a batch is late, stalls in the queue's read — the data-loading stall gpuspy shows.
Prints what it did so a recording can be checked against it.
"""
import multiprocessing as mp
import os
import sys
import tempfile
import time

SAMPLES = 48
SAMPLE_BYTES = 64 * 1024
BATCH = 4


def worker(worker_id, data_dir, indices, queue):
    for start in range(0, len(indices), BATCH):
        batch = []
        for i in indices[start:start + BATCH]:
            with open(os.path.join(data_dir, f"sample{i:03d}.bin"), "rb") as f:
                batch.append(f.read())
            time.sleep(0.002)  # decoding cost, as an I/O-bound loader sees it
        queue.put((worker_id, len(batch), sum(len(b) for b in batch)))
    queue.put(None)


def train_step(nbytes):
    acc = 0
    for i in range(20000):
        acc = (acc * 31 + i + nbytes) % 1000003
    return acc


def main():
    with tempfile.TemporaryDirectory(prefix="gpuspy-demo-") as data_dir:
        for i in range(SAMPLES):
            with open(os.path.join(data_dir, f"sample{i:03d}.bin"), "wb") as f:
                f.write(os.urandom(SAMPLE_BYTES))
        queue = mp.Queue(maxsize=4)
        workers = [mp.Process(target=worker, name=f"loader{w}",
                              args=(w, data_dir, list(range(w, SAMPLES, 2)), queue))
                   for w in range(2)]
        for p in workers:
            p.start()
        done = steps = samples = 0
        while done < len(workers):
            item = queue.get()
            if item is None:
                done += 1
                continue
            steps += 1
            samples += item[1]
            train_step(item[2])
        for p in workers:
            p.join()
    print(f"demo_workload: {steps} steps, {samples} samples read by {len(workers)} workers")
    return 0 if samples == SAMPLES else 1


if __name__ == "__main__":
    mp.set_start_method("fork")
    sys.exit(main())
