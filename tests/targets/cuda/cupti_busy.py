#!/usr/bin/env python3
"""A CUDA program whose process already has a CUPTI subscriber, as under torch.profiler or nsys:
it subscribes to CUPTI itself before its first CUDA call, then copies data. Prints the
calls.h lines for what it does and "SUBSCRIBED ok" once it holds the subscription."""
import ctypes as C
import sys

cupti = C.CDLL("libcupti.so.13")
cudart = C.CDLL("libcudart.so.13")
CALLBACK = C.CFUNCTYPE(None, C.c_void_p, C.c_int, C.c_uint, C.c_void_p)


@CALLBACK
def on_callback(userdata, domain, cbid, info):
    pass


def main():
    sub = C.c_void_p()
    if cupti.cuptiSubscribe(C.byref(sub), on_callback, None) != 0:
        print("FAIL cuptiSubscribe", flush=True)
        return 1
    print("SUBSCRIBED ok", flush=True)
    n = 1 << 16
    host = (C.c_ubyte * n)()
    dev = C.c_void_p()
    if cudart.cudaMalloc(C.byref(dev), C.c_size_t(n)) != 0:
        print("FAIL cudaMalloc", flush=True)
        return 1
    print("ALLOC api=cudaMalloc bytes=%d ok=1" % n)
    for _ in range(3):
        if cudart.cudaMemcpy(dev, host, C.c_size_t(n), 1) != 0:
            print("FAIL cudaMemcpy", flush=True)
            return 1
        print("MEMCPY kind=HtoD bytes=%d stream=default api=cudaMemcpy" % n)
    cudart.cudaFree(dev)
    print("FREE api=cudaFree ok=1")
    cupti.cuptiUnsubscribe(sub)
    print("DONE ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
