#!/usr/bin/python3
"""Runs Holistic Trace Analysis (from its source: HTA_DIR) on a directory of Kineto traces and
checks that every analysis it documents returns data.

    run_hta.py TRACE_DIR [--ranks N] [--operator NAME] [--annotation NAME]

Single-rank analyses run on rank 0 (and on every rank with --ranks N); with --ranks N the trace
directory must hold ranks 0..N-1, each found from its distributedInfo with world_size N, and
the multi-rank analyses run too. Prints one line per analysis, "hta: NAME: ROWS rows", and "FAIL NAME: why" for each
that raised or returned nothing; exits 1 if any failed. HTA is used as it is: nothing of it is
patched, only the plots are turned off (visualize=False).
"""
import argparse
import os
import sys
import tempfile
import traceback

hta_dir = os.environ.get("HTA_DIR")
if not hta_dir:
    print("run_hta: set HTA_DIR to a HolisticTraceAnalysis checkout", file=sys.stderr)
    sys.exit(2)
sys.path.insert(0, hta_dir)

import pandas as pd  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

failed = []
skipped = []


def rows(value):
    """Rows of what an analysis returned: a frame, a list, a dict or tuple of them."""
    if value is None:
        return 0
    if isinstance(value, pd.DataFrame):
        return len(value.index)
    if isinstance(value, dict):
        return min((rows(v) for v in value.values()), default=0)
    if isinstance(value, tuple):
        return min((rows(v) for v in value if v is not None), default=0)
    if isinstance(value, list):
        return len(value)
    return 1


def check(name, call, required=True):
    """Runs one analysis; one that is not required is reported and never fails the run."""
    required = required and not any(name.startswith(s) for s in skipped)
    try:
        value = call()
    except Exception:  # an analysis that raises is a failure to report, not to stop at
        if required:
            failed.append(name)
        print("%s %s: raised\n%s" % ("FAIL" if required else "hta: (not asserted)", name,
                                     traceback.format_exc()))
        return None
    n = rows(value)
    print("hta: %s: %d rows%s" % (name, n, "" if required else " (not asserted)"))
    if n == 0 and required:
        failed.append(name)
        print("FAIL %s: no data" % name)
    return value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace_dir")
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--operator", default="aten::linear",
                    help="the CPU operator whose kernel sequences are searched")
    ap.add_argument("--min-pattern-len", type=int, default=3,
                    help="the shortest kernel sequence searched for")
    ap.add_argument("--annotation", default="ProfilerStep")
    ap.add_argument("--skip", action="append", default=[],
                    help="run but do not assert the analyses whose names start with this")
    args = ap.parse_args()
    skipped.extend(args.skip)

    analyzer = TraceAnalysis(trace_dir=args.trace_dir)
    ranks = sorted(analyzer.t.traces)
    print("hta: ranks %s" % ranks)
    if ranks != list(range(args.ranks)):
        print("FAIL ranks: %s, want 0..%d" % (ranks, args.ranks - 1))
        return 1
    for rank in ranks:
        info = analyzer.t.meta_data[rank].get("distributedInfo", {})
        print("hta: rank %d: distributedInfo %s" % (rank, info))
        if args.ranks > 1 and info.get("world_size") != args.ranks:
            print("FAIL rank %d: world_size %s, want %d" % (rank, info.get("world_size"),
                                                          args.ranks))
            return 1

    check("profiler steps", analyzer.get_profiler_steps)
    check("temporal breakdown", lambda: analyzer.get_temporal_breakdown(visualize=False))
    check("idle time breakdown", lambda: analyzer.get_idle_time_breakdown(
        ranks=ranks, visualize=False, show_idle_interval_stats=True))
    check("kernel breakdown", lambda: analyzer.get_gpu_kernel_breakdown(visualize=False))
    check("user annotation breakdown (CPU)", lambda: analyzer.get_gpu_user_annotation_breakdown(
        use_gpu_annotation=False, visualize=False))
    check("kernels with user annotations", lambda: pd.concat(
        [analyzer.get_gpu_kernels_with_user_annotations(rank=r) for r in ranks]))
    check("user annotation breakdown (GPU)", lambda: analyzer.get_gpu_user_annotation_breakdown(
        visualize=False))
    check("cuda kernel launch stats", lambda: analyzer.get_cuda_kernel_launch_stats(
        ranks=ranks, visualize=False))
    check("aten op kernels and delay", lambda: analyzer.get_aten_op_kernels_and_delay(
        ranks=ranks))
    queues = check("queue length time series",
                   lambda: analyzer.get_queue_length_time_series(ranks=ranks))
    check("queue length summary", lambda: analyzer.get_queue_length_summary(ranks=ranks))
    if queues:
        # nothing when no queue ever filled (this program's never do): shown, not asserted
        check("time blocked on full queue",
              lambda: analyzer.get_time_spent_blocked_on_full_queue(queues), False)
    check("memory bandwidth time series",
          lambda: analyzer.get_memory_bw_time_series(ranks=ranks))
    check("memory bandwidth summary", lambda: analyzer.get_memory_bw_summary(ranks=ranks))
    with tempfile.TemporaryDirectory() as out:
        for rank in ranks:
            check("frequent cuda kernel sequences (rank %d)" % rank,
                  lambda: analyzer.get_frequent_cuda_kernel_sequences(
                      args.operator, out, min_pattern_len=args.min_pattern_len, rank=rank,
                      visualize=False))
    for rank in ranks:
        result = check("critical path (rank %d)" % rank,
                       lambda: analyzer.critical_path_analysis(rank, args.annotation, 1))
        if result:
            cp_graph, ok = result
            edges = cp_graph.critical_path_edges_set if ok else set()
            print("hta: critical path (rank %d): analysis %s, %d edges on the path" %
                  (rank, "succeeded" if ok else "failed", len(edges)))
            if not ok or not edges:
                failed.append("critical path (rank %d)" % rank)
                print("FAIL critical path (rank %d): no path" % rank)
    if args.ranks > 1:
        # 0% per rank here: the ranks run no collectives, and the stragglers are found from
        # collective (NCCL) kernels, which the simulated GPU has none of: shown, not asserted
        check("comm comp overlap", lambda: analyzer.get_comm_comp_overlap(visualize=False))
        check("potential stragglers", lambda: analyzer.get_potential_stragglers(), False)
    if failed:
        print("hta: %d analyses failed: %s" % (len(failed), ", ".join(failed)))
        return 1
    print("hta: all analyses returned data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
