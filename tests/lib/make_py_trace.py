#!/usr/bin/env python3
"""Writes a small trace file by hand: Python stacks, CPU samples, a syscall with an off-CPU
sleep, CUDA launches and PyTorch operator calls on known threads at known times, so the
python report, the collapsed output and the timeline can be checked against exact numbers
without a recording (docs/FORMAT.md is the format; bpf/records.h the record layouts).

usage: make_py_trace.py OUT.gpuspy REPO_ROOT

The scenario (pid 100; times from T0 in ms; period 1 ms):
  tid 100 samples  1..4  <module> > train > busy_loop
                   5..6  <module> > train > busy_loop > inner_math
                   7..8  <module> > train > fib > fib > fib
                   9     <module> > train
                   26..27 <module> > train > busy_loop
  tid 100 preempted 3.5 for 0.1 ms, inside sample 3 (no stack captured: the sample's holds)
  tid 100 read     20 for 5 ms under <module> > train > read_input, asleep 21..24
  tid 100 aten::add 29.9..30.1 (aten::empty nested), cudaLaunchKernel at 30 for 10 us (a
          cuLaunchKernel nested in it), under <module> > train > busy_loop > inner_math
  tid 100 cudaLaunchKernel at 35 for 10 us, outside any operator, under <module> > train
  tid 101 samples  1..3  <module> > busy_loop
"""
import struct
import sys
import zlib

T0 = 1_000_000_000
MS = 1_000_000
PID = 100

HDR = "<HHIIIQ"

# (code address, stamp, qualname, filename, first line)
CODES = {
    "module": (0x1000, 1, "<module>", "/work/app/main.py", 1),
    "train": (0x2000, 2, "train", "/work/app/main.py", 10),
    "busy": (0x3000, 3, "busy_loop", "/work/app/main.py", 20),
    "inner": (0x4000, 4, "inner_math", "/usr/lib/python3/dist-packages/mylib/ops.py", 5),
    "read": (0x5000, 5, "read_input", "/work/app/main.py", 30),
    "fib": (0x6000, 6, "fib", "/work/app/main.py", 40),
}

# instruction k (code units) is on line firstlineno + k: CPython 3.10's co_linetable of
# (bytes covered, line delta) pairs, one 2-byte instruction each
LINETABLE = bytes([2, 0] + [2, 1] * 15)


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def rec(rtype, body, pid=PID, tid=PID, flags=0, ts=T0):
    body = pad8(body)
    return struct.pack(HDR, rtype, 24 + len(body), pid, tid, flags, ts) + body


def trace_info():
    body = struct.pack("<QQII", 1000, 1000, 1, 1) + b"python3 main.py\0"
    return rec(100, body)


def comm(tid, name):
    return rec(6, name.encode().ljust(16, b"\0"), tid=tid)


def py_proc():
    return rec(108, struct.pack("<II", 1, 0x030A0CF0) + b"/usr/bin/python3.10: synthetic\0")


def py_code(key):
    code, stamp, qualname, filename, first = CODES[key]
    q, f = qualname.encode(), filename.encode()
    body = struct.pack("<QIiHHHH", code, stamp, first, 10, len(q), len(f), len(LINETABLE))
    return rec(109, body + q + b"\0" + f + b"\0" + LINETABLE)


def py_stack(tid, ts, end, kind, frames):
    """frames: root first, as (key, lasti); written leaf first as BPF does."""
    body = struct.pack("<QII", end, kind, len(frames))
    for key, lasti in reversed(frames):
        code, stamp = CODES[key][:2]
        body += struct.pack("<QiI", code, lasti, stamp)
    return rec(11, body, tid=tid, ts=ts)


def syscall(tid, ts, dur, nr):
    return rec(1, struct.pack("<QqQQQQII", dur, 10, 3, 0, 4096, 0, nr, 0), tid=tid, ts=ts)


def offcpu(tid, ts, dur, reason):
    return rec(2, struct.pack("<QII", dur, reason, 0), tid=tid, ts=ts)


def probe_index(root, name):
    n = 0
    with open(f"{root}/loader/cuda_probe_list.h") as f:
        for line in f:
            if line.startswith("CUDA_PROBE("):
                if line.split(",")[1].strip() == name:
                    return n
                n += 1
    raise SystemExit(f"no probe {name}")


def cuda_call(tid, ts, dur, probe, depth, nested):
    if nested:  # cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, stream)
        args = [0x7100, 1, 1, 1, 32, 1, 1, 0, 0]
    else:  # cudaLaunchKernel(func, grid x|y, grid z, block x|y, block z, args, shmem, stream)
        args = [0x7000, 1 | 1 << 32, 1, 32 | 1 << 32, 1, 0, 0, 0, 0]
    body = struct.pack("<Qq9QQHHI", dur, 0, *args, 0, probe, depth, 0)
    return rec(7, body, tid=tid, ts=ts, flags=1 if nested else 0)


def op_call(tid, ts, dur, op, depth, nested):
    return rec(12, struct.pack("<QIHH", dur, op, depth, 0), tid=tid, ts=ts,
               flags=1 if nested else 0)


def op_name(op, name):
    return rec(110, struct.pack("<II", op, 0) + name.encode() + b"\0")


def samples():
    out = []
    main = [("module", 0), ("train", 1)]
    plan = [(1, main + [("busy", 0)]), (2, main + [("busy", 1)]), (3, main + [("busy", 1)]),
            (4, main + [("busy", 0)]), (5, main + [("busy", 2), ("inner", 0)]),
            (6, main + [("busy", 2), ("inner", 0)]),
            (7, main + [("fib", 0), ("fib", 3), ("fib", 3)]),
            (8, main + [("fib", 0), ("fib", 3), ("fib", 3)]), (9, main),
            (26, main + [("busy", 0)]), (27, main + [("busy", 0)])]
    for at, frames in plan:
        out.append(py_stack(PID, T0 + at * MS, T0 + (at + 1) * MS, 4, frames))
    for at in (1, 2, 3):
        out.append(py_stack(101, T0 + at * MS, T0 + (at + 1) * MS, 4,
                            [("module", 0), ("busy", 0)]))
    return out


def op_and_cuda(root):
    under = [("module", 0), ("train", 1), ("busy", 2), ("inner", 0)]
    add, launch = T0 + 29 * MS + 900_000, T0 + 30 * MS
    return [
        op_name(0, "aten::add"),
        op_name(1, "aten::empty"),
        py_stack(PID, add, add + 200_000, 3, under),
        py_stack(PID, launch, launch + 10_000, 2, under),
        op_call(PID, add + 50_000, 20_000, 1, 1, True),
        cuda_call(PID, launch + 1_000, 8_000, probe_index(root, "cuLaunchKernel"), 1, True),
        cuda_call(PID, launch, 10_000, probe_index(root, "cudaLaunchKernel"), 0, False),
        op_call(PID, add, 200_000, 0, 0, False),
    ]


def records(root):
    recs = [trace_info(), comm(PID, "python3"), comm(101, "worker"), py_proc()]
    recs += [py_code(k) for k in CODES]
    recs += samples()
    read_at = T0 + 20 * MS
    recs.append(py_stack(PID, read_at, read_at + 5 * MS, 1,
                         [("module", 1), ("train", 2), ("read", 1)]))
    recs.append(offcpu(PID, T0 + 3 * MS + 500_000, 100_000, 0))
    recs.append(offcpu(PID, read_at + MS, 3 * MS, 1))
    recs.append(syscall(PID, read_at, 5 * MS, 0))
    recs += op_and_cuda(root)
    alone = T0 + 35 * MS
    recs.append(py_stack(PID, alone, alone + 10_000, 2, [("module", 0), ("train", 3)]))
    recs.append(cuda_call(PID, alone, 10_000, probe_index(root, "cudaLaunchKernel"), 0, False))
    recs.append(rec(105, struct.pack("<Q", len(recs)), ts=T0 + 40 * MS))
    return recs


def main(out, root):
    recs = records(root)
    payload = b"".join(recs)
    header = struct.pack("<8sHHIQQ64s64s", b"GPUSPYTR", 1, 3, 160, 1_700_000_000 * 10**9, T0,
                         b"synthetic", b"6.0")
    block = struct.pack("<IIII", 0x4B425347, len(payload), len(recs), zlib.crc32(payload))
    with open(out, "wb") as f:
        f.write(header + block + payload)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
