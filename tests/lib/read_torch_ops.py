#!/usr/bin/env python3
"""The in-process observer's records in a gpuspy trace file (docs/FORMAT.md: the header, zstd
blocks decoded with the zstd command, GS_REC_TORCH_OP and GS_REC_TORCH_NAME), counted as
tests/targets/torch/observer_loop.py counts them: starts and ends per name, paired with a
stack per thread, sequence numbers with torch.profiler's rule for the autograd engine's
ranges, input shapes texts per name ("shapes", as observer_loop.py's), and how the observer
and the CUPTI bridge came to be in the process (BRIDGE_LOAD records, "torch_loads" and
"bridge_loads": outcome, err, message). Prints one JSON object.

usage: read_torch_ops.py TRACE PID"""
import collections
import json
import struct
import subprocess
import sys
import zlib

HEADER_SIZE = 160
ZBLOCK = struct.Struct("<IIIIHHI")  # magic, stored_len, raw_len, count, codec, transform, crc
ZB_MAGIC = 0x425A5347
HDR = struct.Struct("<HHIIIQ")
OP = struct.Struct("<qIIII")
NAME = struct.Struct("<II")
TORCH_OP, TORCH_NAME, BRIDGE_STATUS, BRIDGE_LOAD = 29, 30, 27, 112
LOAD = struct.Struct("<IiQQ")  # outcome, err, pause_ns, wait_ns, then the message
LOAD_TORCH = 1  # hdr.flags of BRIDGE_LOAD: the observer's, not the CUPTI bridge's
EVALUATE = "autograd::engine::evaluate_function: "


def blocks(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"GPUSPYTR" or struct.unpack_from("<H", data, 8)[0] != 2:
        raise SystemExit("read_torch_ops: %s is not a format 2 trace" % path)
    at = HEADER_SIZE
    while at + ZBLOCK.size <= len(data):
        magic, stored, raw, count, codec, transform, crc = ZBLOCK.unpack_from(data, at)
        if magic != ZB_MAGIC:
            raise SystemExit("read_torch_ops: bad block at %d" % at)
        body = data[at + ZBLOCK.size:at + ZBLOCK.size + stored]
        if zlib.crc32(body, zlib.crc32(data[at:at + 20])) != crc:
            raise SystemExit("read_torch_ops: CRC mismatch at %d" % at)
        if codec == 1:
            body = subprocess.run(["zstd", "-d", "-c", "-q"], input=body, check=True,
                                  stdout=subprocess.PIPE).stdout
        if len(body) != raw:
            raise SystemExit("read_torch_ops: block at %d decodes to %d bytes" % (at, len(body)))
        yield body
        at += ZBLOCK.size + stored


def main():
    path, pid = sys.argv[1], int(sys.argv[2])
    names, starts, ends = {}, collections.Counter(), collections.Counter()
    seq, pending, stacks = collections.Counter(), {}, collections.defaultdict(list)
    shapes = collections.defaultdict(collections.Counter)
    out = {"unpaired": 0, "op_before_name": 0, "records": 0, "statuses": [],
           "torch_loads": [], "bridge_loads": []}
    for body in blocks(path):
        at = 0
        while at < len(body):
            typ, size, rpid, tid, flags, _ = HDR.unpack_from(body, at)
            rec = body[at + HDR.size:at + size]
            at += size
            if rpid != pid:
                continue
            if typ == TORCH_NAME:
                name_id, _ = NAME.unpack_from(rec)
                names[name_id] = rec[NAME.size:].split(b"\0")[0].decode()
            elif typ == BRIDGE_LOAD:
                outcome, err, _, _ = LOAD.unpack_from(rec)
                load = {"outcome": outcome, "err": err,
                        "message": rec[LOAD.size:].split(b"\0")[0].decode()}
                out["torch_loads" if flags & LOAD_TORCH else "bridge_loads"].append(load)
            elif typ == BRIDGE_STATUS:
                out["statuses"].append(struct.unpack_from("<I", rec)[0])
            elif typ == TORCH_OP:
                out["records"] += 1
                seq_nr, name_id, _, scope, shapes_id = OP.unpack_from(rec)
                if name_id not in names or (shapes_id and shapes_id not in names):
                    out["op_before_name"] += 1
                    continue
                name, stack = names[name_id], stacks[tid]
                if not flags & 1:
                    starts[name] += 1
                    stack.append(name)
                    if shapes_id:
                        shapes[name][names[shapes_id]] += 1
                    waiting = pending.pop(tid, None)
                    if waiting and scope == 1 and seq_nr >= 0:
                        seq[waiting] += 1
                    if seq_nr >= 0:
                        seq[name] += 1
                    elif scope == 0 and name.startswith(EVALUATE):
                        pending[tid] = name
                elif stack and stack[-1] == name:
                    stack.pop()
                    ends[name] += 1
                else:
                    out["unpaired"] += 1
    out.update(starts=starts, ends=ends, seq=seq, open=sum(len(s) for s in stacks.values()),
               shapes=shapes)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
