#!/usr/bin/env python3
"""Checks a `gpuspy export --format kineto` file the way Kineto's consumers read it.

Top level: schemaVersion 1, deviceProperties (an entry with id and name per device of the GPU
events, ids unique; any other key one of Kineto's for CUDA devices, with a non-negative integer
value, and a device with one has all of them but sharedMemPerBlockOptin, which CUPTI's device
record lacks), distributedInfo written as `"rank": N` (HTA finds the rank with a regex that needs
the space, and takes the file's first match: it must be distributedInfo's), with world_size
above the rank and local_rank ≥ 0 where present, displayTimeUnit "ms", an integer baseTimeNanoseconds, traceEvents. Every event
has ts, name, cat, pid, tid (HTA drops rows without cat); complete events ("X") have dur, at
least 0.001, and their ts and dur are µs with at most three decimals, as Kineto writes them
(HTA rounds ts up and ts + dur down to whole µs); instants, flows, counters and metadata have
no dur (HTA would read 0 as -1). No event is named __cudaLaunchKernel (HTA knows launches by
CUPTI's names), and no call nested in another (which has no correlation) has a name HTA takes
for a launch (matching "cuda.*LaunchKernel|cuLaunchKernel" at its start). A correlation id
appears on at most one cuda_runtime/cuda_driver event of its process (HTA asserts one), and
with GPU work each GPU event's on exactly one, in its launching process. GPU events (kernel,
gpu_memcpy, gpu_memset, cuda_sync) carry device, stream and correlation, kernels also grid,
block, "registers per thread" and "shared memory"; no CPU event carries "stream" (HTA takes
any event with a stream for GPU work). Every ac2g flow has one start ("s", inside a
cuda_runtime or cuda_driver span on its thread whose correlation is the GPU event's) and one
end ("f", "bp": "e", at the start of a GPU event on its track); every fwdbwd flow (forward ->
backward operator) one start and one end ("bp": "e"), each at the start of a cpu_op with a
sequence number, the same on both. cpu_op events have an integer
"External id", unique in the file, and a CUDA API span with an "External id" names one of
them. A gpu_user_annotation (an annotation's GPU side) is named as a user_annotation, has no
stream arg, and spans from a GPU event's start to a GPU event's end on its track. Prints a
summary line; exits 1 with the first problem.
usage: check_kineto.py FILE.json [--no-gpu]   (--no-gpu: a trace without GPU work, no flows)
"""
import bisect
import json
import re
import sys
from collections import defaultdict

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}
API_CATS = {"cuda_runtime", "cuda_driver"}
KNOWN_CATS = GPU_CATS | API_CATS | {"ac2g", "fwdbwd", "user_annotation", "__metadata", "os_runtime",
                                   "off_cpu", "process", "gpu_memory", "cpu_op",
                                   "python_sample", "gpu_user_annotation"}
EPS = 0.0005  # µs: ns precision


def fail(msg):
    print(f"check_kineto: {msg}", file=sys.stderr)
    sys.exit(1)


def check_top(text, doc):
    if doc.get("schemaVersion") != 1:
        fail("schemaVersion is not 1")
    if not re.search(r'"distributedInfo": \{"rank": \d+', text):
        fail('no "distributedInfo": {"rank": N} as HTA matches it')
    info = doc["distributedInfo"]
    first = re.search(r'"rank":\s+(\d+)', text)  # hta/common/trace_file.py's
    if int(first.group(1)) != info["rank"]:
        fail(f"HTA would read rank {first.group(1)}, distributedInfo has {info['rank']}")
    if "world_size" in info and not (isinstance(info["world_size"], int)
                                     and info["world_size"] > info["rank"]):
        fail(f"distributedInfo world_size {info['world_size']} for rank {info['rank']}")
    if "local_rank" in info and not (isinstance(info["local_rank"], int)
                                     and info["local_rank"] >= 0):
        fail(f"distributedInfo local_rank {info['local_rank']}")
    if doc.get("displayTimeUnit") != "ms":
        fail("displayTimeUnit is not ms")
    if not isinstance(doc.get("baseTimeNanoseconds"), int) or doc["baseTimeNanoseconds"] <= 0:
        fail("baseTimeNanoseconds is not a positive integer")
    props = doc.get("deviceProperties")
    if not isinstance(props, list) or any("id" not in p or "name" not in p for p in props):
        fail("deviceProperties is not a list of entries with id and name")
    if len({p["id"] for p in props}) != len(props):
        fail(f"deviceProperties lists a device twice: {props}")
    for p in props:
        check_device(p)
    if not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents array")
    return {p["id"] for p in props}


# The keys libkineto's DeviceProperties.cpp writes for a CUDA device besides id and name; the
# export writes them all but sharedMemPerBlockOptin (not in CUPTI's device record) when it has
# the device's CUPTI record, none otherwise
DEVICE_KEYS = {"totalGlobalMem", "computeMajor", "computeMinor", "maxThreadsPerBlock",
               "maxThreadsPerMultiprocessor", "regsPerBlock", "regsPerMultiprocessor",
               "warpSize", "sharedMemPerBlock", "sharedMemPerMultiprocessor", "numSms"}


def check_device(p):
    if not isinstance(p["id"], int) or p["id"] < 0 or not isinstance(p["name"], str):
        fail(f"deviceProperties entry with a bad id or name: {p}")
    extra = set(p) - {"id", "name"}
    if extra and extra != DEVICE_KEYS:
        fail(f"deviceProperties entry with keys {sorted(extra)}, not Kineto's "
             f"{sorted(DEVICE_KEYS)}: {p}")
    for k in extra:
        if not isinstance(p[k], int) or isinstance(p[k], bool) or p[k] < 0:
            fail(f"deviceProperties {k} is not a non-negative integer: {p}")


# HTA's kernel launch category (hta/common/types.py), matched at the start of a name
LAUNCH = re.compile(r"(cuda.*LaunchKernel)|(cuLaunchKernel)")
US = re.compile(r"\d+(\.\d{1,3})?$")


def check_times(raw):
    """ts and dur as written (raw: the event parsed with its numbers as text)."""
    for key in ("ts", "dur"):
        if key in raw and not US.match(str(raw[key])):
            fail(f"{key} not µs with at most three decimals: {raw}")
    if raw.get("ph") == "X":
        if "dur" not in raw or float(raw["dur"]) < 0.001:
            fail(f"complete event without a dur of at least 0.001: {raw}")
    elif "dur" in raw:
        fail(f"dur on a {raw.get('ph')} event (Kineto writes none; HTA reads 0 as -1): {raw}")


def check_event(e, devices):
    for key in ("ts", "name", "cat", "pid", "tid"):
        if key not in e:
            fail(f"event without {key}: {e}")
    if e["cat"] not in KNOWN_CATS:
        fail(f"unknown category: {e}")
    if e["ts"] < 0:
        fail(f"negative time: {e}")
    args = e.get("args", {})
    if e["name"].startswith("__cudaLaunchKernel"):
        fail(f"launch under nvcc's stub symbol, not CUPTI's name: {e}")
    if LAUNCH.match(e["name"]) and args.get("nested"):
        fail(f"nested call under a launch name (HTA would take it for a launch): {e}")
    if e["cat"] in GPU_CATS:
        for key in ("device", "stream", "correlation"):
            if not isinstance(args.get(key), int):
                fail(f"GPU event without integer {key}: {e}")
        if args["device"] not in devices:
            fail(f"device {args['device']} not in deviceProperties: {e}")
    elif e["ph"] != "M" and "stream" in args:
        fail(f"CPU event with a stream arg (HTA would take it for GPU work): {e}")
    if e["cat"] == "kernel":
        for key in ("grid", "block"):
            if not (isinstance(args.get(key), list) and len(args[key]) == 3):
                fail(f"kernel without {key} [x, y, z]: {e}")
        for key in ("registers per thread", "shared memory"):
            if not isinstance(args.get(key), int):
                fail(f"kernel without {key}: {e}")


def enclosing_api(api_spans, api_starts, s):
    """The CUDA API span on the flow start's thread that contains it (the innermost)."""
    key = (s["pid"], s["tid"])
    spans = api_spans.get(key, [])
    i = bisect.bisect_right(api_starts.get(key, []), s["ts"] + EPS)  # spans sorted by start
    best = None
    for start, end, corr in reversed(spans[max(0, i - 64):i]):
        if start - EPS <= s["ts"] <= end + EPS and (best is None or start > best[0]):
            best = (start, end, corr)
    return best


def check_external_ids(events):
    ops = set()
    for e in events:
        if e["cat"] == "cpu_op":
            xid = e.get("args", {}).get("External id")
            if not isinstance(xid, int) or xid in ops:
                fail(f"cpu_op without a unique integer External id: {e}")
            ops.add(xid)
    for e in events:
        xid = e.get("args", {}).get("External id")
        if e["cat"] in API_CATS and xid is not None and xid not in ops:
            fail(f"CUDA API span names External id {xid}, which no cpu_op has: {e}")
    return len(ops)


def check_correlations(events, gpu):
    """One CUDA API event per (process, correlation id); each GPU event's id on one."""
    apis = defaultdict(int)
    for e in events:
        corr = e.get("args", {}).get("correlation")
        if e["cat"] in API_CATS and corr is not None:
            apis[(e["pid"], corr)] += 1
            if apis[(e["pid"], corr)] > 1:
                fail(f"correlation {corr} on more than one CUDA API event of pid {e['pid']}: {e}")
    if not gpu:
        return
    for e in events:
        args = e.get("args", {})
        if e["cat"] in GPU_CATS and e["cat"] != "cuda_sync" and \
                apis.get((args.get("launch pid"), args["correlation"])) != 1:
            fail(f"GPU event whose correlation is on no CUDA API event of its process: {e}")


def check_flows(events):
    gpu_starts = {}  # (pid, tid, ts in ns) -> correlation of the GPU event starting there
    api_spans = defaultdict(list)
    for e in events:
        if e["ph"] != "X":
            continue
        if e["cat"] in GPU_CATS:
            gpu_starts[(e["pid"], e["tid"], round(e["ts"] * 1000))] = e["args"]["correlation"]
        elif e["cat"] in API_CATS:
            api_spans[(e["pid"], e["tid"])].append(
                (e["ts"], e["ts"] + e["dur"], e.get("args", {}).get("correlation")))
    api_starts = {}
    for key, spans in api_spans.items():
        spans.sort()
        api_starts[key] = [x[0] for x in spans]
    starts, ends = {}, {}
    for e in events:
        if e["ph"] not in ("s", "f") or e["cat"] == "fwdbwd":
            continue
        if e["cat"] != "ac2g" or "id" not in e:
            fail(f"flow event without cat ac2g or id: {e}")
        side = starts if e["ph"] == "s" else ends
        if e["id"] in side:
            fail(f"flow id {e['id']} used twice: {e}")
        side[e["id"]] = e
    if set(starts) != set(ends):
        fail(f"flow ids without both ends: {sorted(set(starts) ^ set(ends))[:5]}")
    if not ends:
        fail("no ac2g flows")
    for fid, f in ends.items():
        if f.get("bp") != "e":
            fail(f"flow end without bp e: {f}")
        corr = gpu_starts.get((f["pid"], f["tid"], round(f["ts"] * 1000)))
        if corr is None:
            fail(f"flow end not at the start of a GPU event: {f}")
        api = enclosing_api(api_spans, api_starts, starts[fid])
        if api is None or api[2] != corr:
            fail(f"flow start not in a CUDA API span with the GPU event's correlation "
                 f"{corr}: {starts[fid]}")
    return len(ends)


def check_fwdbwd(events):
    """Each fwdbwd flow (the in-process observer's forward -> backward link) has one start, at
    the start of a cpu_op with a sequence number on its thread, and one end ("bp": "e") at the
    start of another cpu_op with the same sequence number. Returns how many."""
    ops = {}
    for e in events:
        if e["ph"] == "X" and e["cat"] == "cpu_op":
            ops.setdefault((e["pid"], e["tid"], round(e["ts"] * 1000)), []).append(e)
    flows = defaultdict(dict)
    for e in events:
        if e["cat"] != "fwdbwd":
            continue
        if e["ph"] not in ("s", "f") or "id" not in e or e["ph"] in flows[e["id"]]:
            fail(f"fwdbwd event not a flow start or end of its own id: {e}")
        if e["ph"] == "f" and e.get("bp") != "e":
            fail(f"fwdbwd flow end without bp e: {e}")
        flows[e["id"]][e["ph"]] = e
    for fid, f in flows.items():
        if set(f) != {"s", "f"}:
            fail(f"fwdbwd flow {fid} without both ends")
        seqs = []
        for side in ("s", "f"):
            at = [o for o in ops.get((f[side]["pid"], f[side]["tid"],
                                      round(f[side]["ts"] * 1000)), [])
                  if "Sequence number" in o.get("args", {})]
            if not at:
                fail(f"fwdbwd flow {side} not at a cpu_op with a sequence number: {f[side]}")
            seqs.append({o["args"]["Sequence number"] for o in at})
        if not seqs[0] & seqs[1]:
            fail(f"fwdbwd flow {fid} joins ops of different sequence numbers: {f}")
    return len(flows)


def check_gpu_annotations(events):
    """Each gpu_user_annotation (no stream arg, as Kineto writes it: HTA would take it for GPU
    work) is named as a user_annotation of the file, on a track of GPU work, from the start of
    a GPU event of that track to the end of one."""
    names = {e["name"] for e in events if e["cat"] == "user_annotation"}
    starts, ends = defaultdict(set), defaultdict(set)
    for e in events:
        if e["cat"] in GPU_CATS and e["ph"] == "X":
            starts[(e["pid"], e["tid"])].add(round(e["ts"] * 1000))
            ends[(e["pid"], e["tid"])].add(round((e["ts"] + e["dur"]) * 1000))
    for e in events:
        if e["cat"] != "gpu_user_annotation":
            continue
        track = (e["pid"], e["tid"])
        if e["name"] not in names or "stream" in e.get("args", {}):
            fail(f"gpu_user_annotation of no user_annotation, or with a stream: {e}")
        if round(e["ts"] * 1000) not in starts[track] or \
                round((e["ts"] + e["dur"]) * 1000) not in ends[track]:
            fail(f"gpu_user_annotation not from a GPU event's start to one's end: {e}")


def main(path, gpu=True):
    text = open(path).read()
    doc = json.loads(text)
    devices = check_top(text, doc)
    if gpu and not devices:
        fail("no deviceProperties in a trace with GPU work")
    events = doc["traceEvents"]
    for raw in json.loads(text, parse_float=str, parse_int=str)["traceEvents"]:
        check_times(raw)
    cats = defaultdict(int)
    for e in events:
        check_event(e, devices)
        cats[e["cat"]] += 1
    check_external_ids(events)
    check_correlations(events, gpu)
    flows = check_flows(events) if gpu else 0
    fwdbwd = check_fwdbwd(events)
    check_gpu_annotations(events)
    print(f"check_kineto: {len(events)} events, {flows} ac2g flows, {fwdbwd} fwdbwd flows, " +
          ", ".join(f"{c} {n}" for c, n in sorted(cats.items())))


if __name__ == "__main__":
    main(sys.argv[1], gpu="--no-gpu" not in sys.argv[2:])
