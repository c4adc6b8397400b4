#!/usr/bin/env python3
"""A long-running CUDA process that holds CUPTI itself, as one under torch.profiler or nsys does
(tests/inject.bats: gpuspy must leave it alone). Like cupti_busy.py it subscribes to CUPTI before
its first CUDA call; it also enables the runtime API callback domain and counts its callbacks,
so it notices if its subscription is disturbed.

usage: inject_cupti_busy.py READY_FILE
Prints "SUBSCRIBED ok", sets up, creates READY_FILE, then does what stdin asks, one command a
line (a blocking read in between):
  go N    N x (4096-byte HtoD cudaMemcpy of a pattern, DtoH cudaMemcpy back, compare), then
          cudaDeviceSynchronize; its callback must have seen exactly one enter and one exit of
          each of these calls: "CALLBACKS ok n=2N+1", "BATCH done n=N"
  exit    (or EOF) free, cuptiUnsubscribe (must still succeed), "DONE ok", exit 0
Prints the calls.h lines for what it does and "FAIL ..." with exit status 1 at the first
failed expectation."""
import ctypes as C
import sys

cupti = C.CDLL("libcupti.so.13")
cudart = C.CDLL("libcudart.so.13")
CALLBACK = C.CFUNCTYPE(None, C.c_void_p, C.c_int, C.c_uint, C.c_void_p)
CUPTI_CB_DOMAIN_RUNTIME_API = 2
ENTER, EXIT = 0, 1
H2D, D2H = 1, 2
COPY_BYTES = 4096
WATCHED = (b"cudaMemcpy", b"cudaDeviceSynchronize")


class CallbackData(C.Structure):  # the head of CUpti_CallbackData
    _fields_ = [("callbackSite", C.c_int), ("functionName", C.c_char_p)]


seen = {}


@CALLBACK
def on_callback(userdata, domain, cbid, info):
    if domain != CUPTI_CB_DOMAIN_RUNTIME_API or not info:
        return
    d = C.cast(info, C.POINTER(CallbackData)).contents
    if d.functionName in WATCHED:
        key = (d.functionName, d.callbackSite)
        seen[key] = seen.get(key, 0) + 1


def fail(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def rt(call, *args):
    err = getattr(cudart, call)(*args)
    if err:
        fail("%s -> %d" % (call, err))


def check_callbacks(copies, syncs):
    want = {}
    for site in (ENTER, EXIT):
        want[(b"cudaMemcpy", site)] = copies
        want[(b"cudaDeviceSynchronize", site)] = syncs
    got = dict(seen)
    seen.clear()
    if got != want:
        fail("callbacks %r, want %r" % (got, want))
    print("CALLBACKS ok n=%d" % (copies + syncs))


def run_batch(dev, n):
    src = (C.c_ubyte * COPY_BYTES)()
    dst = (C.c_ubyte * COPY_BYTES)()
    for i in range(n):
        for k in range(COPY_BYTES):
            src[k] = (i * 13 + k) & 0xFF
        rt("cudaMemcpy", dev, src, C.c_size_t(COPY_BYTES), H2D)
        print("MEMCPY kind=HtoD bytes=%d stream=default api=cudaMemcpy" % COPY_BYTES)
        rt("cudaMemcpy", dst, dev, C.c_size_t(COPY_BYTES), D2H)
        print("MEMCPY kind=DtoH bytes=%d stream=default api=cudaMemcpy" % COPY_BYTES)
        if bytes(dst) != bytes(src):
            fail("round trip %d differs" % i)
    rt("cudaDeviceSynchronize")
    print("SYNC api=cudaDeviceSynchronize")
    check_callbacks(2 * n, 1)
    print("BATCH done n=%d" % n, flush=True)


def main():
    if len(sys.argv) != 2:
        print("usage: inject_cupti_busy.py READY_FILE", file=sys.stderr)
        return 2
    sub = C.c_void_p()
    if cupti.cuptiSubscribe(C.byref(sub), on_callback, None) != 0:
        fail("cuptiSubscribe")
    if cupti.cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API) != 0:
        fail("cuptiEnableDomain")
    print("SUBSCRIBED ok", flush=True)
    dev = C.c_void_p()
    rt("cudaMalloc", C.byref(dev), C.c_size_t(COPY_BYTES))
    print("ALLOC api=cudaMalloc bytes=%d ok=1" % COPY_BYTES)
    run_batch(dev, 1)
    open(sys.argv[1], "w").close()
    for line in iter(sys.stdin.readline, ""):
        words = line.split()
        if len(words) == 2 and words[0] == "go" and words[1].isdigit():
            run_batch(dev, int(words[1]))
        elif words == ["exit"]:
            break
        else:
            fail("unknown command %r" % line)
    rt("cudaFree", dev)
    print("FREE api=cudaFree ok=1")
    if cupti.cuptiUnsubscribe(sub) != 0:
        fail("cuptiUnsubscribe: the subscription is not ours any more")
    print("DONE ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
