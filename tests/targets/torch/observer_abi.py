"""The ctypes binding of gpuspy's in-process operator observer (build/libgpuspy_torch.so,
cupti_bridge/torch_ops.h), shared by the tests' driver (observer_loop.py) and the benchmark
(bench/observer_bench.py): the libtorch entry points it takes, its record and statistics
structs as torch_ops.h lays them out, and the library opened with its prototypes."""
import ctypes

# the libtorch 1.13 symbols gpuspy_torch_ops_init() takes, in struct gpuspy_torch_syms order
SYMS = (
    "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE",
    "_ZN2at14removeCallbackEm",
    "_ZNK2at14RecordFunction4nameEv",
    "_ZNK2at14RecordFunction7isAsyncEv",
)


class Syms(ctypes.Structure):
    _fields_ = [(n, ctypes.c_void_p) for n in ("add", "remove", "name", "is_async")]


class Op(ctypes.Structure):
    # the last word's bit-fields as GCC lays them out on x86-64, lowest bits first
    _fields_ = [("ts", ctypes.c_uint64), ("seq_nr", ctypes.c_int64), ("tid", ctypes.c_uint32),
                ("name_id", ctypes.c_uint32), ("fwd_tid", ctypes.c_uint32),
                ("kind", ctypes.c_uint32, 2), ("flags", ctypes.c_uint32, 2),
                ("scope", ctypes.c_uint32, 4), ("shapes", ctypes.c_uint32, 24)]


class Stats(ctypes.Structure):
    _fields_ = [("recorded", ctypes.c_uint64), ("dropped", ctypes.c_uint64),
                ("no_buffer", ctypes.c_uint64), ("names", ctypes.c_uint32),
                ("buffers", ctypes.c_uint32), ("enables", ctypes.c_uint32),
                ("shapes_on", ctypes.c_uint32), ("pending", ctypes.c_uint64),
                ("no_shapes", ctypes.c_uint64)]


def libtorch_path():
    """The libtorch_cpu this process mapped."""
    with open("/proc/self/maps") as f:
        for line in f:
            if "libtorch_cpu" in line:
                return line.split()[-1]
    raise SystemExit("libtorch_cpu is not mapped")


def addresses(lib):
    """SYMS' addresses in `lib` (a ctypes.CDLL)."""
    return [ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in SYMS]


def open_observer(path):
    """The observer library, its functions' prototypes set."""
    lib = ctypes.CDLL(path)
    lib.gpuspy_torch_ops_init.argtypes = [ctypes.POINTER(Syms), ctypes.c_char_p, ctypes.c_size_t]
    lib.gpuspy_torch_ops_read.argtypes = [ctypes.POINTER(Op), ctypes.c_size_t]
    lib.gpuspy_torch_ops_read.restype = ctypes.c_size_t
    lib.gpuspy_torch_ops_name.argtypes = [ctypes.c_uint32]
    lib.gpuspy_torch_ops_name.restype = ctypes.c_char_p
    lib.gpuspy_torch_ops_set_shapes.argtypes = [ctypes.c_int]
    return lib


def init(lib, addrs):
    """gpuspy_torch_ops_init() with these addresses: (0 or its error, the reason it gave)."""
    why = ctypes.create_string_buffer(256)
    rc = lib.gpuspy_torch_ops_init(ctypes.byref(Syms(*addrs)), why, len(why))
    return rc, why.value.decode()


def stats(lib):
    """gpuspy_torch_ops_stats() as a Stats."""
    s = Stats()
    lib.gpuspy_torch_ops_stats(ctypes.byref(s))
    return s
