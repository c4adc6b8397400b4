#!/usr/bin/env python3
"""Writes a trace file of in-process observer records by hand (GS_REC_TORCH_OP 29 and
GS_REC_TORCH_NAME 30, bpf/records.h; docs/FORMAT.md), so the ops report, the timeline's
forward/backward flows and the input shapes can be checked against exact numbers, and odd
records against a reader that must not crash.

usage: make_torch_trace.py OUT.gpuspy [--odd] [--no-shapes] [--threads] [--random SEED]

The scenario (times in us from T0):
  pid 200, tid 200 (forward; torch's logical thread 1):
      0..60   aten::linear (seq 5, shapes L)  > 10..50 aten::addmm (seq 5, shapes A)
      70..95  aten::linear (seq 6, shapes L)  > 75..90 aten::addmm (seq 6, shapes A)
  pid 200, tid 201 (the autograd engine; logical thread 2):
      200..250 evaluate_function: AddmmBackward0 (no seq) > 201..240 AddmmBackward0 (seq 6,
               fwd thread 1, scope 1) > 210..230 aten::mm
      300..340 the same with seq 5 > 310..320 aten::mm
      400..450 Optimizer.step#SGD.step (scope 7)
  so: each addmm is linked to the evaluate_function range of its own number (2 flows), each
  evaluate_function gets its node's number, and grouping by shapes splits nothing but names.
With --no-shapes the starts carry no shapes.

--odd adds, in pid 300: an end without a start; a start named by an id never named (and one
whose id is 2^32-1); 300 nested starts and their ends on one thread (256 kept, 44 too deep); a
start with no end; a start whose end was dropped inside another range (user::lost in
user::outer); name id 2 naming "user::deep" (pid 200's 2 is aten::addmm); OP_CALL records
of pid 300 (ignored: it has in-process ones) and of pid 400 (kept: it has none).

--threads adds pid 700: two forward threads, 700 (torch's logical thread 1: aten::addmm with
numbers 10 at 0 us and 11 at 10 us) and 701 (logical 2: numbers 20 at 2, 21 at 12 and 10 again
at 20), and the backward thread 702 running AddmmBackward0 for (1, 11) at 100, (2, 21) at 110,
(1, 10) at 120, (2, 20) at 130, (2, 10) at 140: each logical id must be mapped to its thread
(number 10 is on both) for the five links to start on the right forward op.

--random SEED adds 5,000 well-framed records with random fields (starts and ends in random
order, ids small and huge, names of random bytes, times going back), for a reader that must
only not crash. Records go in blocks of 64, so a file cut anywhere keeps the blocks before.
"""
import random
import struct
import sys
import zlib

T0 = 1_000_000_000
US = 1000
HDR = "<HHIIIQ"
END, ASYNC = 1, 2


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def rec(rtype, body, pid, tid, flags=0, ts=T0):
    body = pad8(body)
    return struct.pack(HDR, rtype, 24 + len(body), pid, tid, flags, ts) + body


def name(pid, nid, text):
    return rec(30, struct.pack("<II", nid, 0) + text.encode() + b"\0", pid, pid)


def op(pid, tid, at_us, nid, end=False, seq=-1, fwd=0, scope=0, shapes=0):
    return rec(29, struct.pack("<qIIII", seq, nid, fwd, scope, shapes), pid, tid,
               END if end else 0, T0 + int(at_us * US))


def rng(pid, tid, start, stop, nid, inner=(), **kw):
    """A start, what runs inside it, its end."""
    out = [op(pid, tid, start, nid, **kw)]
    for r in inner:
        out += r
    return out + [op(pid, tid, stop, nid, end=True, seq=kw.get("seq", -1),
                     fwd=kw.get("fwd", 0), scope=kw.get("scope", 0))]


def op_call(pid, tid, at_us, dur_us, index, depth=0):
    return rec(12, struct.pack("<QIHH", dur_us * US, index, depth, 0), pid, tid,
               1 if depth else 0, T0 + at_us * US)


def op_name(index, text):
    return rec(110, struct.pack("<II", index, 0) + text.encode() + b"\0", 1, 1)


def scenario(shapes):
    p = 200
    L, A = (7, 8) if shapes else (0, 0)
    recs = [name(p, 1, "aten::linear"), name(p, 2, "aten::addmm"),
            name(p, 3, "autograd::engine::evaluate_function: AddmmBackward0"),
            name(p, 4, "AddmmBackward0"), name(p, 5, "aten::mm"),
            name(p, 6, "Optimizer.step#SGD.step")]
    if shapes:
        recs += [name(p, 7, "[[16, 2048], [10, 2048], [10]]"),
                 name(p, 8, "[[10], [16, 2048], [2048, 10], [], []]")]
    for start, seq in ((0, 5), (70, 6)):
        recs += rng(p, 200, start, start + (60 if seq == 5 else 25), 1, seq=seq, shapes=L,
                    inner=[rng(p, 200, start + (10 if seq == 5 else 5),
                               start + (50 if seq == 5 else 20), 2, seq=seq, shapes=A)])
    for start, seq in ((200, 6), (300, 5)):
        recs += rng(p, 201, start, start + (50 if seq == 6 else 40), 3,
                    inner=[rng(p, 201, start + 1, start + 40 if seq == 6 else start + 30, 4,
                               seq=seq, fwd=1, scope=1,
                               inner=[rng(p, 201, start + 10,
                                          start + (30 if seq == 6 else 20), 5)])])
    recs += rng(p, 201, 400, 450, 6, scope=7)
    return recs


def odd():
    p = 300
    recs = [name(p, 2, "user::deep"), name(p, 9, "user::open")]
    recs += [op(p, 300, 1, 2, end=True)]                      # an end without a start
    recs += rng(p, 300, 2, 3, 1234567)                        # never named
    recs += rng(p, 300, 4, 5, 0xFFFFFFFF, seq=2**62, fwd=0xFFFFFFFF, shapes=0xFFFFFFFF)
    recs += [op(p, 301, 10 + i * 0.01, 2) for i in range(300)]
    recs += [op(p, 301, 20 - i * 0.01, 2, end=True) for i in range(300)]
    recs += [op(p, 302, 30, 9)]                               # no end
    # user::lost's end dropped (a full ring): user::outer's end closes both, pairing outer
    recs += [name(p, 10, "user::outer"), name(p, 11, "user::lost"), op(p, 303, 50, 10),
             op(p, 303, 51, 11), op(p, 303, 60, 10, end=True)]
    recs += [op_name(77, "aten::uprobed"), op_call(p, 300, 40, 5, 77), op_call(400, 400, 40, 5, 77),
             op_call(400, 400, 41, 1, 77, depth=1)]
    return recs


def threads():
    p = 700
    recs = [name(p, 1, "aten::addmm"), name(p, 2, "AddmmBackward0")]
    for tid, at, seq in ((700, 0, 10), (701, 2, 20), (700, 10, 11), (701, 12, 21),
                         (701, 20, 10)):
        recs += rng(p, tid, at, at + 5, 1, seq=seq)
    for at, fwd, seq in ((100, 1, 11), (110, 2, 21), (120, 1, 10), (130, 2, 20), (140, 2, 10)):
        recs += rng(p, 702, at, at + 5, 2, seq=seq, fwd=fwd, scope=1)
    return recs


def randomised(seed):
    rnd = random.Random(seed)
    recs = []
    for _ in range(5000):
        pid, tid = rnd.choice((500, 501)), rnd.choice((500, 502, 503))
        nid = rnd.choice((0, 1, 2, 3, rnd.getrandbits(32)))
        if rnd.random() < 0.1:
            text = bytes(rnd.getrandbits(8) | 1 for _ in range(rnd.randrange(0, 40)))
            recs.append(rec(30, struct.pack("<II", nid, 0) + text + b"\0", pid, tid))
            continue
        body = struct.pack("<qIIII", rnd.choice((-1, 0, 1, 2, rnd.getrandbits(63))), nid,
                           rnd.choice((0, 1, 2, rnd.getrandbits(32))), rnd.choice((0, 1, 7, 255,
                           rnd.getrandbits(32))), rnd.choice((0, 1, 2, rnd.getrandbits(32))))
        recs.append(rec(29, body, pid, tid, rnd.getrandbits(2),
                        T0 + rnd.randrange(-10**6, 10**9)))
    return recs


def write(out, recs):
    recs = [rec(100, struct.pack("<QQII", 1000, 1000, 1, 1) + b"python3 train.py\0", 1, 1)] + \
        recs
    recs = recs + [rec(105, struct.pack("<Q", len(recs)), 1, 1, ts=T0 + 10**9)]
    header = struct.pack("<8sHHIQQ64s64s", b"GPUSPYTR", 1, 4, 160, 1_700_000_000 * 10**9, T0,
                         b"synthetic", b"6.0")
    with open(out, "wb") as f:
        f.write(header)
        for i in range(0, len(recs), 64):
            payload = b"".join(recs[i:i + 64])
            f.write(struct.pack("<IIII", 0x4B425347, len(payload), len(recs[i:i + 64]),
                                zlib.crc32(payload)))
            f.write(payload)


def main():
    out = sys.argv[1]
    recs = scenario("--no-shapes" not in sys.argv)
    if "--odd" in sys.argv:
        recs += odd()
    if "--threads" in sys.argv:
        recs += threads()
    if "--random" in sys.argv:
        recs += randomised(int(sys.argv[sys.argv.index("--random") + 1]))
    write(out, recs)


if __name__ == "__main__":
    main()
