#!/usr/bin/python3.11
"""Drives gpuspy's in-process operator observer (build/libgpuspy_torch.so) in a real torch
process, through ctypes, for tests/torch_observer.bats.

    observer_loop.py --lib LIB counts --iters N      observer, then torch.profiler, on N
                                                     iterations each of train_loop.py's loop
    observer_loop.py --lib LIB both --iters N        both at once on the same N iterations
    observer_loop.py --lib LIB toggle --cycles N     N enable/disable cycles while a second
                                                     thread runs operators, then ops after
    observer_loop.py --lib LIB refuse --syms WHAT    init with other addresses: prints why
    observer_loop.py --lib LIB wire --iters N        as counts, reading the records as they
                                                     are sent to gpuspy (bpf/records.h's
                                                     GS_REC_TORCH_OP and GS_REC_TORCH_NAME)
    observer_loop.py --lib LIB serve --iters N [--go FIFO --oracle F]   for gpuspy record:
                                                     the control thread started, READY, then
                                                     at a line on FIFO: wait until gpuspy's
                                                     attach turned it on, N iterations, wait
                                                     until all is sent, DONE; at a second
                                                     line torch.profiler's counts of N more
                                                     into F, and exit; without --go (launched
                                                     by gpuspy) it exits right after the loop
    observer_loop.py --lib LIB gate --iters N        the control thread: gpuspy:records'
                                                     semaphore raised and lowered by hand, as
                                                     the kernel does when gpuspy attaches

Prints one JSON object on stdout. Counts are per RecordFunction name: "starts" and "ends" of
the observer's records, "torch" the profiler's events as recorded (before key_averages()
merges some, see train_loop.py). The libtorch entry points are resolved here with dlsym on
their mangled names, as gpuspy will resolve them from the library's symbols.
"""
import argparse
import collections
import ctypes
import json
import os
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import train_loop  # noqa: E402
from observer_abi import Op, Stats, addresses, init, libtorch_path, open_observer, stats  # noqa: E402

EVALUATE = "autograd::engine::evaluate_function: "


class Observer:
    def __init__(self, path):
        self.lib = open_observer(path)
        self.buf = (Op * 4096)()
        self.names = {}
        self.starts = collections.Counter()
        self.ends = collections.Counter()
        self.unpaired = 0
        self.stacks = collections.defaultdict(list)
        self.seq = collections.Counter()  # operators with a sequence number
        self.pending = {}  # tid -> an evaluate_function start waiting for its node's seq

    def init(self, addrs):
        return init(self.lib, addrs)

    def name(self, i):
        if i not in self.names:
            n = self.lib.gpuspy_torch_ops_name(i)
            self.names[i] = n.decode() if n else "?"
        return self.names[i]

    def drain(self):
        """Reads every record out; starts and ends must nest per thread."""
        total = 0
        while True:
            n = self.lib.gpuspy_torch_ops_read(self.buf, len(self.buf))
            self.count(self.buf[:n])
            total += n
            if n < len(self.buf):
                return total

    def count(self, recs):
        for r in recs:
            name = self.name(r.name_id)
            stack = self.stacks[r.tid]
            if r.kind == 1:
                self.starts[name] += 1
                stack.append(name)
                # torch.profiler gives the autograd engine's evaluate_function range the
                # sequence number of the backward node recorded right after it
                # (collection.cpp, TorchOpStorage::materialize); so does this reader
                waiting = self.pending.pop(r.tid, None)
                if waiting and r.scope == 1 and r.seq_nr >= 0:
                    self.seq[waiting] += 1
                if r.seq_nr >= 0:
                    self.seq[name] += 1
                elif r.scope == 0 and name.startswith(EVALUATE):
                    self.pending[r.tid] = name
            elif stack and stack[-1] == name:
                stack.pop()
                self.ends[name] += 1
            else:
                self.unpaired += 1

    def stats(self):
        s = stats(self.lib)
        return {f: getattr(s, f) for f, _ in Stats._fields_ if f != "pad"}


GS_REC_TORCH_OP, GS_REC_TORCH_NAME = 29, 30
HDR = struct.Struct("<HHIIIQ")  # struct gs_hdr: type, size, pid, tid, flags, ts
OP = struct.Struct("<qIIII")  # struct gs_torch_op after the header
NAME = struct.Struct("<II")  # struct gs_torch_name after the header, then the text


class Wire:
    """The records gpuspy would receive, parsed from bytes as a reader of bpf/records.h
    would; they feed the same counters as Observer.drain."""

    def __init__(self, obs):
        self.obs = obs
        self.buf = ctypes.create_string_buffer(1 << 20)
        self.names = {}
        self.first = True
        self.bad = []  # what a reader would reject
        self.lib = obs.lib
        self.lib.gpuspy_torch_ops_convert.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                      ctypes.c_int]
        self.lib.gpuspy_torch_ops_convert.restype = ctypes.c_size_t
        self.pid = os.getpid()

    def drain(self):
        while True:
            n = self.lib.gpuspy_torch_ops_convert(self.buf, len(self.buf), int(self.first))
            self.first = False
            data, at, recs = self.buf.raw[:n], 0, []
            while at < n:
                typ, size, pid, tid, flags, ts = HDR.unpack_from(data, at)
                if size < HDR.size or size % 8 or at + size > n or pid != self.pid:
                    self.bad.append("framing at %d" % at)
                    break
                body = data[at + HDR.size:at + size]
                if typ == GS_REC_TORCH_NAME and size >= HDR.size + NAME.size + 8:
                    name_id, _ = NAME.unpack_from(body)
                    text = body[NAME.size:]
                    if b"\0" not in text:
                        self.bad.append("name not terminated")
                    self.names[name_id] = text.split(b"\0")[0].decode()
                elif typ == GS_REC_TORCH_OP and size == HDR.size + OP.size:
                    seq, name_id, fwd, scope, _ = OP.unpack_from(body)
                    if name_id not in self.names:
                        self.bad.append("op before its name %d" % name_id)
                    recs.append(Op(ts=ts, seq_nr=seq, tid=tid, name_id=name_id, fwd_tid=fwd,
                                   kind=2 if flags & 1 else 1, scope=scope, flags=flags >> 1))
                else:
                    self.bad.append("record type %d size %d" % (typ, size))
                at += size
            self.obs.names.update(self.names)
            self.obs.count(recs)
            if n < len(self.buf) // 2:
                return


def profiled(state, iters, obs=None):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(iters):
            train_loop.step(*state)
            if obs:
                obs.drain()
    events = list(prof.profiler.kineto_results.events())
    counts = collections.Counter(e.name() for e in events)
    seq = collections.Counter(e.name() for e in events if e.sequence_nr() >= 0)
    return counts, seq


def observed(obs, state, iters, reader=None):
    reader = reader or obs
    obs.lib.gpuspy_torch_ops_enable()
    for _ in range(iters):
        train_loop.step(*state)
        reader.drain()
    obs.lib.gpuspy_torch_ops_disable()
    reader.drain()


def result(obs, torch_counts=None, torch_seq=None, **extra):
    out = {"starts": obs.starts, "ends": obs.ends, "unpaired": obs.unpaired,
           "open": sum(len(s) for s in obs.stacks.values()), "seq": obs.seq,
           "stats": obs.stats()}
    if torch_counts is not None:
        out["torch"] = torch_counts
        out["torch_seq"] = torch_seq
    out.update(extra)
    return out


def wait_until(cond, seconds=5.0):
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def gate(obs, state, iters):
    """The control thread follows the semaphore: on at two polls in a row, every record read
    out (and sent) by it, off when it drops."""
    sema = ctypes.c_ushort.in_dll(obs.lib, "gpuspy_records_semaphore")
    flush = ctypes.c_ushort.in_dll(obs.lib, "gpuspy_flush_semaphore")
    out = {"start_gate": obs.lib.gpuspy_torch_ops_start_gate()}
    train_loop.run(2, state)
    out["enables_closed"] = obs.stats()["enables"]
    sema.value = 1
    out["opened"] = wait_until(lambda: obs.stats()["enables"] == 1)
    base = obs.stats()["recorded"]
    train_loop.run(iters, state)
    recorded = obs.stats()["recorded"] - base
    # the control thread reads every ring out within 20 ms: nothing left for this reader
    out["drained"] = wait_until(lambda: obs.stats()["pending"] == 0)
    out["left_for_us"] = obs.drain()
    flush.value = 1
    time.sleep(0.1)
    flush.value = 0
    sema.value = 0
    # off: the callbacks unregistered, nothing more recorded
    time.sleep(0.1)
    after = obs.stats()["recorded"]
    train_loop.run(iters, state)
    out["recorded_when_closed"] = obs.stats()["recorded"] - after
    out["recorded"] = recorded
    counts, _ = profiled(state, iters)
    out["profiler_events"] = sum(counts.values())
    out["stats"] = obs.stats()
    return out


def serve(obs, state, args):
    print(json.dumps({"start_gate": obs.lib.gpuspy_torch_ops_start_gate()}), flush=True)
    print("READY", flush=True)
    go = open(args.go) if args.go else None
    if go:
        go.readline()
    if not wait_until(lambda: obs.stats()["enables"] >= 1, 10):
        raise SystemExit("observer_loop: gpuspy's attach did not turn the observer on")
    base = obs.stats()["recorded"]
    train_loop.run(args.iters, state)
    recorded = obs.stats()["recorded"] - base
    if not go:
        # launched under gpuspy: exit at once, what is still in the rings is the exit
        # handler's to deliver
        print(json.dumps({"recorded": recorded}), flush=True)
        print("DONE %d" % args.iters, flush=True)
        return
    wait_until(lambda: obs.stats()["pending"] == 0)
    print(json.dumps({"recorded": recorded, "stats": obs.stats()}), flush=True)
    print("DONE %d" % args.iters, flush=True)
    go.readline()
    counts, seq = profiled(state, args.iters)
    with open(args.oracle, "w") as f:
        json.dump({"torch": counts, "torch_seq": seq}, f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", required=True)
    p.add_argument("mode", choices=("counts", "both", "toggle", "refuse", "wire",
                                      "gate", "serve"))
    p.add_argument("--go", help="serve: the FIFO to read lines from")
    p.add_argument("--oracle", help="serve: where to write torch.profiler's counts")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--cycles", type=int, default=200)
    p.add_argument("--syms", default="libtorch",
                   help="refuse: libtorch, swapped (name and isAsync swapped), libc, FILE.so")
    args = p.parse_args()

    state = train_loop.make()
    train_loop.run(2, state)  # warm-up, as train_loop.py does
    torch_lib = ctypes.CDLL(libtorch_path(), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    obs = Observer(args.lib)

    if args.mode == "refuse":
        if args.syms == "libtorch":
            addrs = addresses(torch_lib)
        elif args.syms == "swapped":
            a = addresses(torch_lib)
            addrs = [a[0], a[1], a[3], a[2]]
        elif args.syms == "libc":
            libc = ctypes.CDLL(None)
            addrs = [ctypes.cast(getattr(libc, n), ctypes.c_void_p).value
                     for n in ("printf", "puts", "strlen", "strcmp")]
        else:
            addrs = addresses(ctypes.CDLL(args.syms))
        rc, why = obs.init(addrs)
        # the process goes on with its operators whatever the answer
        train_loop.run(2, state)
        print(json.dumps({"rc": rc, "why": why, "stats": obs.stats(), "enable_rc":
                          obs.lib.gpuspy_torch_ops_enable() if rc else None}))
        obs.lib.gpuspy_torch_ops_disable()
        return 0

    rc, why = obs.init(addresses(torch_lib))
    if rc:
        print(json.dumps({"rc": rc, "why": why}))
        return 1

    if args.mode == "counts":
        observed(obs, state, args.iters)
        counts, seq = profiled(state, args.iters)
        print(json.dumps(result(obs, counts, seq)))
    elif args.mode == "serve":
        serve(obs, state, args)
    elif args.mode == "gate":
        print(json.dumps(gate(obs, state, args.iters)))
    elif args.mode == "wire":
        wire = Wire(obs)
        observed(obs, state, args.iters, wire)
        counts, seq = profiled(state, args.iters)
        print(json.dumps(result(obs, counts, seq, bad=wire.bad, wire_names=len(wire.names))))
    elif args.mode == "both":
        obs.lib.gpuspy_torch_ops_enable()
        counts, seq = profiled(state, args.iters, obs)
        obs.lib.gpuspy_torch_ops_disable()
        obs.drain()
        print(json.dumps(result(obs, counts, seq)))
    else:
        stop = threading.Event()
        other = {"iters": 0}

        def worker():
            a, b = torch.randn(32, 32), torch.randn(32, 32)
            while not stop.is_set():
                torch.relu(torch.mm(a, b) + 1)
                other["iters"] += 1

        t = threading.Thread(target=worker)
        t.start()
        for _ in range(args.cycles):
            obs.lib.gpuspy_torch_ops_enable()
            train_loop.step(*state)
            obs.lib.gpuspy_torch_ops_disable()
            obs.drain()
        before = obs.stats()["recorded"]
        train_loop.run(5, state)  # disabled and unregistered: nothing may be recorded
        stop.set()
        t.join()
        after = obs.stats()["recorded"]
        print(json.dumps(result(obs, recorded_after_disable=after - before,
                                worker_iters=other["iters"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
