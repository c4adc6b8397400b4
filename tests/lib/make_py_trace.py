#!/usr/bin/env python3
"""Writes a small trace file by hand: Python stacks, CPU samples, a syscall with an off-CPU
sleep, CUDA launches and PyTorch operator calls on known threads at known times, so the
python report, the collapsed output and the timeline can be checked against exact numbers
without a recording (docs/FORMAT.md is the format; bpf/records.h the record layouts).

usage: make_py_trace.py OUT.gpuspy REPO_ROOT
       make_py_trace.py --stats OUT.gpuspy            statistics checkpoints and FINAL records
       make_py_trace.py --stats-truncated OUT.gpuspy  the same, cut short after a FINAL
       make_py_trace.py --many-keys OUT.gpuspy PROCS SYSCALLS   a churn of short processes

--stats and --stats-truncated: GS_REC_SYSCALL_STATS and GS_REC_OFFCPU_STATS records, both
checkpoints (flags 0, cumulative) and FINAL records (flags GS_STATS_FINAL: a thread's totals at
its exit), in the orders tests/stats_model.bats checks (stats_scenario() says what each key
must add up to). --many-keys: PROCS single-threaded processes (fork, exec, exit) that each made
SYSCALLS different syscalls (a few histogram buckets each) and slept, flushed as FINAL records:
a trace with PROCS x SYSCALLS statistics keys, to measure what the model keeps per key.

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
    with open(f"{root}/output/trace/cuda_probe_list.h") as f:
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


# --- statistics records (--stats, --stats-truncated, --many-keys) ---

STATS_FINAL = 1  # hdr.flags of SYSCALL_STATS / OFFCPU_STATS: the thread exited, final totals
HIST_SUB_SHIFT, HIST_MIN_SHIFT, HIST_OCTAVES = 2, 6, 34
HIST_BUCKETS = HIST_OCTAVES << HIST_SUB_SHIFT
BLOCK_MAX = 1 << 20


def hist_bucket(d):
    """bpf/osrt.bpf.c's hist_bucket()."""
    if d < 1 << HIST_MIN_SHIFT:
        return d >> (HIST_MIN_SHIFT - HIST_SUB_SHIFT)
    msb = d.bit_length() - 1
    octave = msb - HIST_MIN_SHIFT + 1
    if octave >= HIST_OCTAVES:
        return HIST_BUCKETS - 1
    sub = (d >> (msb - HIST_SUB_SHIFT)) & ((1 << HIST_SUB_SHIFT) - 1)
    return (octave << HIST_SUB_SHIFT) + sub


def syscall_stats(pid, tid, nr, ts, durs, final=False):
    """A SYSCALL_STATS record of the durations `durs` (all the calls so far: cumulative)."""
    hist = {}
    for d in durs:
        hist[hist_bucket(d)] = hist.get(hist_bucket(d), 0) + 1
    sumsq = sum(d * d for d in durs)
    body = struct.pack("<II6Q", nr, len(hist), len(durs), sum(durs), min(durs, default=0),
                       max(durs, default=0), sumsq & (2**64 - 1), sumsq >> 64)
    body += b"".join(struct.pack("<II", b, c) for b, c in sorted(hist.items()))
    return rec(102, body, pid=pid, tid=tid, ts=ts, flags=STATS_FINAL if final else 0)


def offcpu_stats(pid, tid, ts, ns, count, final=False):
    """An OFFCPU_STATS record: ns and count by reason (preempted, sleeping, uninterruptible)."""
    return rec(103, struct.pack("<6Q", *ns, *count), pid=pid, tid=tid, ts=ts,
               flags=STATS_FINAL if final else 0)


def stats_scenario():
    """Process 300's threads; the comment on each says what its key must add up to."""
    p = 300
    at = lambda ms: T0 + ms * MS
    return [
        trace_info(),
        *(rec(6, name.ljust(16, b"\0"), pid=p, tid=t)
          for t, name in ((301, b"ckpt-final"), (302, b"final-reuse"), (303, b"two-finals"),
                          (304, b"ckpt-only"), (305, b"late-final"))),
        # 301 read: two checkpoints, then the thread's final, which supersedes them: 4 calls
        syscall_stats(p, 301, 0, at(10), [100, 200]),
        syscall_stats(p, 301, 0, at(20), [100, 200, 300]),
        syscall_stats(p, 301, 0, at(25), [100, 200, 300, 400], final=True),
        # 302 write: a final, then a stale checkpoint written after it (older: dropped), then a
        # new thread that reused the tid, still running at the end: 2 + 1 calls
        syscall_stats(p, 302, 1, at(10), [1000, 3000], final=True),
        syscall_stats(p, 302, 1, at(5), [1000]),
        syscall_stats(p, 302, 1, at(30), [500]),
        # 303 read: two threads, each checkpointed then final: 2 + 2 calls
        syscall_stats(p, 303, 0, at(10), [50]),
        syscall_stats(p, 303, 0, at(20), [50, 70], final=True),
        syscall_stats(p, 303, 0, at(30), [2000]),
        syscall_stats(p, 303, 0, at(40), [2000, 4000], final=True),
        # 304 read: checkpoints only (a thread alive at the end): the last one, 2 calls
        syscall_stats(p, 304, 0, at(10), [10]),
        syscall_stats(p, 304, 0, at(20), [10, 20]),
        # 305 read: a reused tid's checkpoint written before the earlier thread's final (its
        # exit was drained after the checkpoint dump): both count, 1 + 2 calls
        syscall_stats(p, 305, 0, at(30), [7000]),
        syscall_stats(p, 305, 0, at(20), [1000, 2000], final=True),
        # off-CPU 301: checkpoint then final; 302: final then a reused tid's checkpoint; 305:
        # as its syscalls
        offcpu_stats(p, 301, at(10), [0, 100, 0], [0, 1, 0]),
        offcpu_stats(p, 301, at(25), [0, 300, 50], [0, 2, 1], final=True),
        offcpu_stats(p, 302, at(10), [10, 1000, 0], [1, 1, 0], final=True),
        offcpu_stats(p, 302, at(30), [0, 7, 0], [0, 1, 0]),
        offcpu_stats(p, 305, at(30), [0, 7, 0], [0, 1, 0]),
        offcpu_stats(p, 305, at(20), [0, 3, 0], [0, 1, 0], final=True),
    ]


def many_keys(procs, syscalls):
    """Processes 1000.. each exec'd, made `syscalls` syscalls a few times and exited."""
    recs = [trace_info()]
    for i in range(procs):
        pid, ts = 1000 + i, T0 + i * 100_000
        name = f"short{i % 1000}".encode().ljust(16, b"\0")
        recs.append(rec(3, struct.pack("<II", pid, pid) + name, pid=1, tid=1, ts=ts))
        recs.append(rec(4, name + b"/usr/bin/true".ljust(96, b"\0"), pid=pid, tid=pid, ts=ts))
        for nr in range(syscalls):
            durs = [200 + 37 * nr, 250 + 37 * nr, 900 + nr * 111, 5000 + (i % 7) * 1000]
            recs.append(syscall_stats(pid, pid, nr, ts + 50_000, durs, final=True))
        recs.append(offcpu_stats(pid, pid, ts + 50_000, [200, 5000, 1000], [1, 3, 1], final=True))
        recs.append(rec(5, struct.pack("<iI", 0, 0) + name, pid=pid, tid=pid, ts=ts + 50_000,
                        flags=1))
    return recs


def write_blocks(out, recs, trailer=True, cut=None):
    """Records in blocks of at most 1 MiB, then the trailer; `cut`: a last block of these
    records written only in part (a recording that stopped mid-write), and no trailer."""
    if trailer and cut is None:
        recs = recs + [rec(105, struct.pack("<Q", len(recs)), ts=T0 + 10**12)]
    header = struct.pack("<8sHHIQQ64s64s", b"GPUSPYTR", 1, 4, 160, 1_700_000_000 * 10**9, T0,
                         b"synthetic", b"6.0")

    def block(rs):
        payload = b"".join(rs)
        return struct.pack("<IIII", 0x4B425347, len(payload), len(rs),
                           zlib.crc32(payload)) + payload

    with open(out, "wb") as f:
        f.write(header)
        run, size = [], 0
        for r in recs:
            if size + len(r) > BLOCK_MAX:
                f.write(block(run))
                run, size = [], 0
            run.append(r)
            size += len(r)
        if run:
            f.write(block(run))
        if cut:
            whole = block(cut)
            f.write(whole[:len(whole) - 8])


if __name__ == "__main__":
    if sys.argv[1] == "--stats":
        write_blocks(sys.argv[2], stats_scenario())
    elif sys.argv[1] == "--stats-truncated":
        # every block up to the finals is whole; the next one (another final and checkpoint
        # of 301) was being written when the recording stopped: not read
        later = [syscall_stats(300, 301, 0, T0 + 60 * MS, [1, 2, 3, 4, 5], final=True),
                 syscall_stats(300, 304, 0, T0 + 60 * MS, [10, 20, 30])]
        write_blocks(sys.argv[2], stats_scenario(), cut=later)
    elif sys.argv[1] == "--many-keys":
        write_blocks(sys.argv[2], many_keys(int(sys.argv[3]), int(sys.argv[4])))
    else:
        main(sys.argv[1], sys.argv[2])
