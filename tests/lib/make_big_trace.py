#!/usr/bin/env python3
"""Writes a format 2 trace of N events of one kind, as the trace writer stores them (blocks of
at most 256 KiB of records, time stamps as differences, zstd level 1, CRC-32), to measure what
`gpuspy report` needs per event (docs/BENCHMARKS.md, "Large traces") and to check it stays bounded
(tests/report_memory.bats). Needs the zstd command.

usage: make_big_trace.py KIND N OUT.gpuspy REPO_ROOT

  syscall  N syscall spans (read, write, getppid) of one thread
  cuda     N cudaLaunchKernel calls of one kernel, as the uprobes record them
  gpu      N/3 launches, each three events: the uprobe call, CUPTI's API record and the
           kernel's GPU record, joined by correlation id
  api      N CUPTI API records of cudaLaunchKernel and nothing else: the GPU API records of a
           crafted trace, none of which joins anything (each one is listed as unmatched)
  python   N CPU samples of a Python thread, 6 frames deep
  ops      N PyTorch operator calls, every other one nested in the one before
"""
import os
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_py_trace as mpt  # noqa: E402  (record layouts shared with the hand-written traces)

PID, T0 = mpt.PID, mpt.T0
BLOCK_MAX = 256 << 10  # the writer's block (output/trace/trace_writer.c)
ZBLOCK_MAGIC, CODEC_ZSTD, TS_DELTA = 0x425A5347, 1, 1
LAUNCH_NAME = b"cudaLaunchKernel_v7000\0"
KERNEL = b"_Z11tick_kernelPj\0"


def gpu_api(ts, dur, correlation, tid=PID):
    return mpt.rec(23, struct.pack("<QIIIi", dur, correlation, 211, 1, 0) + LAUNCH_NAME,
                   tid=tid, ts=ts)


def gpu_kernel(ts, dur, correlation):
    body = struct.pack("<QIIII3I3IIIIIQ", dur, correlation, 0, 1, 7, 2, 1, 1, 64, 1, 1, 16, 0,
                       0, 0, 0)
    return mpt.rec(20, body + KERNEL, tid=0, ts=ts)


def bridge_status(ts, state):
    return mpt.rec(27, struct.pack("<IiQQ", state, 0, 0, 0) + b"\0", ts=ts)


def gpu_clock(ts):
    return mpt.rec(26, struct.pack("<qQII", 10**12, 500, 8, 0), ts=ts)


def cuda_name(handle):
    return mpt.rec(8, struct.pack("<QII", handle, 0xFFFF, 0) + KERNEL)


def events(kind, n, root):
    """The records of the trace, after its TRACE_INFO and COMM."""
    launch = mpt.probe_index(root, "cudaLaunchKernel")
    if kind == "syscall":
        for i in range(n):
            yield mpt.syscall(PID, T0 + i * 3000, 1000 + i % 97, (0, 1, 110)[i % 3])
    elif kind == "cuda":
        yield cuda_name(0x7000)
        for i in range(n):
            yield mpt.cuda_call(PID, T0 + i * 20_000, 10_000 + i % 89, launch, 0, False)
    elif kind == "gpu":
        yield cuda_name(0x7000)
        yield bridge_status(T0 - 1000, 1)
        yield gpu_clock(T0 - 1000)
        for i in range(n // 3):
            ts = T0 + i * 20_000
            yield mpt.cuda_call(PID, ts, 10_000, launch, 0, False)
            yield gpu_api(ts + 1000, 8000, i + 1)
            yield gpu_kernel(ts + 12_000, 5000 + i % 61, i + 1)
        yield bridge_status(T0 + n * 20_000, 5)
    elif kind == "api":
        for i in range(n):
            yield gpu_api(T0 + i * 2000, 1000 + i % 53, i + 1)
    elif kind == "python":
        yield mpt.py_proc()
        for key in mpt.CODES:
            yield mpt.py_code(key)
        frames = [("module", 0), ("train", 1), ("busy", 2), ("inner", 0), ("fib", 3),
                  ("read", 1)]
        for i in range(n):
            ts = T0 + i * 1_000_000
            yield mpt.py_stack(PID, ts, ts + 1_000_000, 4, frames[:3 + i % 4])
    elif kind == "ops":
        yield mpt.op_name(0, "aten::linear")
        yield mpt.op_name(1, "aten::addmm")
        for i in range(n // 2):
            ts = T0 + i * 10_000
            yield mpt.op_call(PID, ts + 1000, 5000 + i % 37, 1, 1, True)
            yield mpt.op_call(PID, ts, 8000, 0, 0, False)
    else:
        raise SystemExit("unknown kind %s" % kind)


def zblock(recs):
    """A GSZB block: time stamps as differences within the block, zstd, CRC over both."""
    raw, prev = bytearray(), 0
    for r in recs:
        ts = struct.unpack_from("<Q", r, 16)[0]
        raw += r[:16] + struct.pack("<Q", (ts - prev) % (1 << 64)) + r[24:]
        prev = ts
    stored = subprocess.run(["zstd", "-1", "-q", "-c", "--no-check"], input=bytes(raw),
                            stdout=subprocess.PIPE, check=True).stdout
    head = struct.pack("<IIIIHH", ZBLOCK_MAGIC, len(stored), len(raw), len(recs), CODEC_ZSTD,
                       TS_DELTA)
    return head + struct.pack("<I", zlib.crc32(stored, zlib.crc32(head))) + stored


def main(kind, n, out, root):
    header = struct.pack("<8sHHIQQ64s64s", b"GPUSPYTR", 2, 1, 160, 1_700_000_000 * 10**9, T0,
                         b"synthetic", b"6.0")
    count, last = 0, T0
    with open(out, "wb") as f:
        f.write(header)
        run, size = [mpt.trace_info(), mpt.comm(PID, "python3")], 0
        for r in events(kind, n, root):
            if size + len(r) > BLOCK_MAX:
                f.write(zblock(run))
                count += len(run)
                run, size = [], 0
            run.append(r)
            size += len(r)
            last = max(last, struct.unpack_from("<Q", r, 16)[0])
        run.append(mpt.rec(105, struct.pack("<Q", count + len(run)), ts=last + 1))
        f.write(zblock(run))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
