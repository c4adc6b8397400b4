#!/usr/bin/python3.11
"""torch.profiler's view of tests/targets/torch/train_loop.py's loop, for what the in-process
observer's records must reproduce beyond counts: N iterations (after the loop's two warm-up
ones) under torch.profiler (CPU activities), written as one JSON object:

  links     Kineto's forward -> backward links, counted as "FWD -> BWD" by name
  seq       per name, the events with a sequence number
  averages  per key_averages() row, its count (its _remove_dup_nodes merges included)
  torch     per name, the events as recorded

usage: torch_links.py --iters N > ORACLE.json

The loop is deterministic (fixed seed, one intra-op thread), so another process running it
makes the same operator calls as the one gpuspy recorded.
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "targets",
                                "torch"))
import train_loop  # noqa: E402


def fwd_bwd_links(events):
    """Kineto's rule (torch/csrc/autograd/profiler_kineto.cpp, generateForwardBackwardLink), in
    start order: a forward op (no forward thread) is the candidate of its (thread, sequence
    number), the latest started winning; a backward op takes the candidate of its (forward
    thread, number), used up then."""
    cand, links = {}, collections.Counter()
    for e in sorted(events, key=lambda e: e.start_us()):
        if e.sequence_nr() < 0:
            continue
        if e.fwd_thread_id() > 0:
            f = cand.pop((e.fwd_thread_id(), e.sequence_nr()), None)
            if f is not None:
                links[f.name() + " -> " + e.name()] += 1
        else:
            cand[(e.start_thread_id(), e.sequence_nr())] = e
    return links


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args()
    from torch.profiler import ProfilerActivity, profile

    state = train_loop.make()
    train_loop.run(2, state)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train_loop.run(args.iters, state)
    events = list(prof.profiler.kineto_results.events())
    json.dump({"links": fwd_bwd_links(events),
               "seq": collections.Counter(e.name() for e in events if e.sequence_nr() >= 0),
               "averages": {a.key: a.count for a in prof.key_averages()},
               "torch": collections.Counter(e.name() for e in events)}, sys.stdout)


if __name__ == "__main__":
    main()
