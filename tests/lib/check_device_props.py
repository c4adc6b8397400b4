#!/usr/bin/env python3
"""Compares a Kineto export's deviceProperties with what the traced program printed.

The program (tests/targets/cuda/device_props.cu) prints `DEVICE {...}` lines: each device's
cudaGetDeviceProperties() under the keys Kineto writes. Every device it printed must be in
the export with the real name and every other Kineto key but sharedMemPerBlockOptin (CUPTI's
device record has no opt-in shared memory: the export leaves it out), each equal to the
program's value; the export lists no device the program did not. Prints a summary line; exits
1 with the first difference.
usage: check_device_props.py PROGRAM_OUTPUT EXPORT.json
"""
import json
import sys

ABSENT = {"sharedMemPerBlockOptin"}


def fail(msg):
    print(f"check_device_props: {msg}", file=sys.stderr)
    sys.exit(1)


def main(out_path, export_path):
    oracle = {}
    for line in open(out_path):
        if line.startswith("DEVICE "):
            d = json.loads(line[len("DEVICE "):])
            oracle[d["id"]] = d
    if not oracle:
        fail("the program printed no DEVICE line")
    props = json.load(open(export_path)).get("deviceProperties", [])
    got = {p["id"]: p for p in props}
    if set(got) != set(oracle):
        fail(f"devices {sorted(got)} in the export, {sorted(oracle)} in the program")
    for dev, want in oracle.items():
        have = got[dev]
        if set(have) != set(want) - ABSENT:
            fail(f"device {dev}: keys {sorted(have)}, want {sorted(set(want) - ABSENT)}")
        for k, v in have.items():
            if v != want[k]:
                fail(f"device {dev}: {k} is {v!r} in the export, {want[k]!r} in the program")
    print(f"check_device_props: {len(oracle)} device(s), "
          f"{sum(len(p) for p in got.values())} values equal to cudaGetDeviceProperties()")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: check_device_props.py PROGRAM_OUTPUT EXPORT.json")
    main(sys.argv[1], sys.argv[2])
