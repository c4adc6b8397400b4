#!/usr/bin/env python3
"""Drive libtorch_aten_like_cuda.so (aten_like.cu) through ctypes the way PyTorch's Python layer
drives libtorch: a training-step-like sequence of operator calls (linear with and without bias,
add.Scalar, view, softmax, dropout, item), ITERATIONS times, on the simulated GPU or a real one.

Before the first launch it gives every kernel of the library its simulated duration
(FAKECUDA_KERNEL_NS, read by the simulator at its first kernel), then prints on stdout one JSON
object: what the library itself counted, per operator name as torch.profiler groups them
(aten::add = add.Tensor + add.Scalar):
  {"iterations": N,
   "ops": {"aten::linear": {"calls", "self_kernels", "kernels",
                            "self_cuda_ns", "cuda_total_ns",   # simulated GPU time of the kernels
                            "cpu_ns",       # wall time inside call(), measured by the op itself
                            "launch_ns",    # host time in the kernel launches under the op
                            "children": {"aten::matmul": calls, ...}}, ...},
   "outside_kernels", "outside_kernel_ns",   # kernels launched by no operator
   "kernel_ns_total"}
usage: aten_like.py LIB [ITERATIONS]"""
import ctypes as C
import json
import os
import sys


def main():
    if len(sys.argv) < 2:
        print("usage: aten_like.py LIB [ITERATIONS]", file=sys.stderr)
        return 2
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    lib = C.CDLL(os.path.abspath(sys.argv[1]))
    lib.aten_like_kernel_spec.restype = C.c_char_p
    lib.aten_like_stats_json.restype = C.c_char_p
    lib.aten_like_add_scalar.argtypes = [C.c_double]
    lib.aten_like_dropout.argtypes = [C.c_double]
    lib.aten_like_view.argtypes = [C.c_long]
    lib.aten_like_item.restype = C.c_double

    # ours first: the simulator takes the first duration given for a name
    spec = lib.aten_like_kernel_spec().decode()
    old = os.environ.get("FAKECUDA_KERNEL_NS")
    os.environ["FAKECUDA_KERNEL_NS"] = spec + ("," + old if old else "")

    err = lib.aten_like_init()
    if err:
        print("FAIL aten_like_init -> cudaError %d" % err, file=sys.stderr)
        return 1
    for i in range(iterations):
        lib.aten_like_linear(1)  # linear -> matmul -> mm, add.Tensor
        lib.aten_like_linear(0)  # linear -> matmul -> mm
        lib.aten_like_add_scalar(0.5)
        lib.aten_like_view(128)
        lib.aten_like_softmax()
        lib.aten_like_dropout(0.1)  # dropout -> bernoulli_
        if i % 5 == 0:
            lib.aten_like_outside_kernel()
        lib.aten_like_item()  # waits for the GPU
    err = lib.aten_like_finish()
    if err:
        print("FAIL CUDA error %d" % err, file=sys.stderr)
        return 1

    stats = json.loads(lib.aten_like_stats_json().decode())
    name_of = {op["schema"]: op["name"] for op in stats["ops"]}
    ops = {}
    for op in stats["ops"]:
        row = ops.setdefault(op["name"], {"calls": 0, "self_kernels": 0, "kernels": 0,
                                          "self_cuda_ns": 0, "cuda_total_ns": 0, "cpu_ns": 0,
                                          "launch_ns": 0, "children": {}})
        for key, src in (("calls", "calls"), ("self_kernels", "self_kernels"),
                         ("kernels", "kernels"), ("self_cuda_ns", "self_kernel_ns"),
                         ("cuda_total_ns", "kernel_ns"), ("cpu_ns", "cpu_ns"),
                         ("launch_ns", "launch_ns")):
            row[key] += op[src]
        for schema, calls in op["children"].items():
            child = name_of[schema]
            row["children"][child] = row["children"].get(child, 0) + calls

    # the library's counts against the calls made here
    want = {"aten::linear": 2, "aten::matmul": 2, "aten::mm": 2, "aten::add": 2,
            "aten::view": 1, "aten::softmax": 1, "aten::dropout": 1, "aten::bernoulli_": 1,
            "aten::_local_scalar_dense": 1}
    for name, per_iteration in want.items():
        if ops[name]["calls"] != per_iteration * iterations:
            print("FAIL %s: %d calls, want %d" % (name, ops[name]["calls"],
                                                  per_iteration * iterations), file=sys.stderr)
            return 1
    print(json.dumps({
        "iterations": iterations,
        "ops": ops,
        "outside_kernels": stats["outside_kernels"],
        "outside_kernel_ns": stats["outside_kernel_ns"],
        "kernel_ns_total": sum(row["self_cuda_ns"] for row in ops.values())
        + stats["outside_kernel_ns"],
    }, indent=1, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
