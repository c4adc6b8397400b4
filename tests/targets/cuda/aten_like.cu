// libtorch_aten_like_cuda.so: a stand-in for libtorch's operator layer, for testing operator
// tracing on the simulated GPU. Like libtorch it defines each operator as a struct in
// namespace at::_ops with a static member function `call` (mangled
// _ZN2at4_ops<struct>4callE...), keeps each operator's schema string in .rodata exactly as
// libtorch's registration code does ("add.Tensor(Tensor self, ...) -> Tensor": the struct is
// add_Tensor, the operator aten::add), and its operators call one another (linear -> matmul
// -> mm) and launch real nvcc __global__ kernels through libcudart.
//
// It is also its own oracle: every call() keeps, per operator, the calls, the kernels launched
// while it was the innermost operator ("self") and while it was on the stack ("total"), their
// simulated GPU time (each kernel's duration is set through the simulator's
// FAKECUDA_KERNEL_NS, from aten_like_kernel_spec()), its own wall time measured inside the
// body and the host time spent in kernel launches; aten_like_stats_json() prints them.
// The library name holds "torch" and "cuda": a tracer may hold a process at dlopen only for
// such paths. Works unchanged on a real GPU (the kernels do trivial work there; the GPU times
// are then the GPU's).
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace
{

// Kernels and the durations the simulator gives them (FAKECUDA_KERNEL_NS): distinct values, so
// a wrong sum tells which kernel went missing or was counted twice.
enum kernel_id {
	K_GEMM,
	K_ADD_TENSOR,
	K_ADD_SCALAR,
	K_SOFTMAX_MAX,
	K_SOFTMAX_NORM,
	K_BERNOULLI,
	K_MASK_MUL,
	K_OUTSIDE, // launched by no operator (as a Python extension's own kernel would be)
	K_COUNT
};

struct kernel_info {
	const char *mangled;
	uint64_t ns;
};

const kernel_info kernels[K_COUNT] = {
    {"_Z11gemm_kernelPfi", 200000},	   {"_Z17add_tensor_kernelPfi", 30000},
    {"_Z17add_scalar_kernelPfi", 7000},	   {"_Z18softmax_max_kernelPfi", 11000},
    {"_Z19softmax_norm_kernelPfi", 13000}, {"_Z16bernoulli_kernelPfi", 17000},
    {"_Z15mask_mul_kernelPfi", 5000},	   {"_Z14outside_kernelPfi", 3000},
};

// Operators: the schema string libtorch registers for each (RegisterSchema.cpp's m.def) and
// the name torch.profiler shows (the schema's name without its overload).
enum op_id {
	OP_LINEAR,
	OP_MATMUL,
	OP_MM,
	OP_ADD_TENSOR,
	OP_ADD_SCALAR,
	OP_SOFTMAX,
	OP_VIEW,
	OP_DROPOUT,
	OP_BERNOULLI,
	OP_LOCAL_SCALAR_DENSE,
	OP_COUNT
};

struct op_info {
	const char *schema;
	const char *name;
};

// Referenced by aten_like_schemas(), so the strings stay in .rodata.
const op_info ops[OP_COUNT] = {
    {"linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", "aten::linear"},
    {"matmul(Tensor self, Tensor other) -> Tensor", "aten::matmul"},
    {"mm(Tensor self, Tensor mat2) -> Tensor", "aten::mm"},
    {"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "aten::add"},
    {"add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", "aten::add"},
    {"softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", "aten::softmax"},
    {"view(Tensor(a) self, SymInt[] size) -> Tensor(a)", "aten::view"},
    {"dropout(Tensor input, float p, bool train) -> Tensor", "aten::dropout"},
    {"bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> "
     "Tensor(a!)",
     "aten::bernoulli_"},
    {"_local_scalar_dense(Tensor self) -> Scalar", "aten::_local_scalar_dense"},
};

struct op_stats {
	uint64_t calls, self_kernels, kernels, self_kernel_ns, kernel_ns, cpu_ns, launch_ns;
	uint64_t child_calls[OP_COUNT]; // direct children, by operator
};

op_stats stats[OP_COUNT];
uint64_t outside_kernels, outside_kernel_ns;
cudaError_t first_error = cudaSuccess;

// The operators on this thread, innermost last (calls come from one Python thread).
int stack[16];
int depth;

uint64_t now_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Counts one call of an operator for as long as it is in scope.
class op_scope
{
      public:
	explicit op_scope(int op) : op_(op), start_(now_ns())
	{
		stats[op].calls++;
		if (depth > 0)
			stats[stack[depth - 1]].child_calls[op]++;
		stack[depth++] = op;
	}
	~op_scope()
	{
		depth--;
		stats[op_].cpu_ns += now_ns() - start_;
	}
	op_scope(const op_scope &) = delete;
	op_scope &operator=(const op_scope &) = delete;

      private:
	int op_;
	uint64_t start_;
};

// Credits a kernel to the innermost operator (self) and to every operator on the stack (total;
// the same operator twice on the stack would count once, as in torch.profiler: none here).
void account(int k, uint64_t launch_ns)
{
	if (depth == 0) {
		outside_kernels++;
		outside_kernel_ns += kernels[k].ns;
		return;
	}
	stats[stack[depth - 1]].self_kernels++;
	stats[stack[depth - 1]].self_kernel_ns += kernels[k].ns;
	for (int i = 0; i < depth; i++) {
		bool seen = false;
		for (int j = 0; j < i; j++)
			seen = seen || stack[j] == stack[i];
		if (seen)
			continue;
		stats[stack[i]].kernels++;
		stats[stack[i]].kernel_ns += kernels[k].ns;
		stats[stack[i]].launch_ns += launch_ns;
	}
}

void note(cudaError_t e)
{
	if (e != cudaSuccess && first_error == cudaSuccess)
		first_error = e;
}

float *device_buf;
const int buf_floats = 256;

} // namespace

__global__ void gemm_kernel(float *p, int n)
{
	p[threadIdx.x % n] *= 2.0f;
}
__global__ void add_tensor_kernel(float *p, int n)
{
	p[threadIdx.x % n] += 1.0f;
}
__global__ void add_scalar_kernel(float *p, int n)
{
	p[threadIdx.x % n] += 0.5f;
}
__global__ void softmax_max_kernel(float *p, int n)
{
	p[threadIdx.x % n] -= 1.0f;
}
__global__ void softmax_norm_kernel(float *p, int n)
{
	p[threadIdx.x % n] *= 0.5f;
}
__global__ void bernoulli_kernel(float *p, int n)
{
	p[threadIdx.x % n] = 1.0f;
}
__global__ void mask_mul_kernel(float *p, int n)
{
	p[threadIdx.x % n] *= 0.25f;
}
__global__ void outside_kernel(float *p, int n)
{
	p[threadIdx.x % n] = 0.0f;
}

namespace
{

typedef void (*kernel_fn)(float *, int);
const kernel_fn kernel_fns[K_COUNT] = {gemm_kernel,	   add_tensor_kernel,	add_scalar_kernel,
				       softmax_max_kernel, softmax_norm_kernel, bernoulli_kernel,
				       mask_mul_kernel,	   outside_kernel};

void launch(int k)
{
	uint64_t t0 = now_ns();
	kernel_fns[k]<<<1, 64>>>(device_buf, buf_floats);
	uint64_t t1 = now_ns();
	note(cudaGetLastError());
	account(k, t1 - t0);
}

} // namespace

namespace at
{

// A tensor in name only: the kernels never compute anything that is checked.
struct Tensor {
	float *data;
	int64_t numel;
};

namespace _ops
{

// Declared as libtorch declares them (ATen/ops/*_ops.h): one struct per operator and overload,
// the call out of line, never inlined nor cloned (noipa), so each call enters the symbol a
// tracer probes.
#define NOINLINE __attribute__((noipa, visibility("default")))

struct linear {
	NOINLINE static Tensor call(const Tensor &input, const Tensor &weight, const Tensor *bias);
};
struct matmul {
	NOINLINE static Tensor call(const Tensor &self, const Tensor &other);
};
struct mm {
	NOINLINE static Tensor call(const Tensor &self, const Tensor &mat2);
};
struct add_Tensor {
	NOINLINE static Tensor call(const Tensor &self, const Tensor &other, double alpha);
};
struct add_Scalar {
	NOINLINE static Tensor call(const Tensor &self, double other, double alpha);
};
struct softmax_int {
	NOINLINE static Tensor call(const Tensor &self, int64_t dim);
};
struct view {
	NOINLINE static Tensor call(const Tensor &self, int64_t size);
};
struct dropout {
	NOINLINE static Tensor call(const Tensor &input, double p, bool train);
};
struct bernoulli__float {
	NOINLINE static Tensor &call(Tensor &self, double p);
};
struct _local_scalar_dense {
	NOINLINE static double call(const Tensor &self);
};

// No kernel of its own: matmul, then the bias.
Tensor linear::call(const Tensor &input, const Tensor &weight, const Tensor *bias)
{
	op_scope scope(OP_LINEAR);
	Tensor out = matmul::call(input, weight);
	return bias ? add_Tensor::call(out, *bias, 1.0) : out;
}

Tensor matmul::call(const Tensor &self, const Tensor &other)
{
	op_scope scope(OP_MATMUL);
	return mm::call(self, other);
}

Tensor mm::call(const Tensor &self, const Tensor &mat2)
{
	op_scope scope(OP_MM);
	(void)mat2;
	launch(K_GEMM);
	return self;
}

Tensor add_Tensor::call(const Tensor &self, const Tensor &other, double alpha)
{
	op_scope scope(OP_ADD_TENSOR);
	(void)other;
	(void)alpha;
	launch(K_ADD_TENSOR);
	return self;
}

Tensor add_Scalar::call(const Tensor &self, double other, double alpha)
{
	op_scope scope(OP_ADD_SCALAR);
	(void)other;
	(void)alpha;
	launch(K_ADD_SCALAR);
	return self;
}

// Two kernels, as a real softmax has (a reduction, then the normalisation).
Tensor softmax_int::call(const Tensor &self, int64_t dim)
{
	op_scope scope(OP_SOFTMAX);
	(void)dim;
	launch(K_SOFTMAX_MAX);
	launch(K_SOFTMAX_NORM);
	return self;
}

// Metadata only: no kernel, no CUDA call.
Tensor view::call(const Tensor &self, int64_t size)
{
	op_scope scope(OP_VIEW);
	Tensor out = self;
	out.numel = size;
	return out;
}

// A kernel of its own after a child operator's.
Tensor dropout::call(const Tensor &input, double p, bool train)
{
	op_scope scope(OP_DROPOUT);
	if (!train)
		return input;
	Tensor mask = input;
	bernoulli__float::call(mask, 1.0 - p);
	launch(K_MASK_MUL);
	return input;
}

Tensor &bernoulli__float::call(Tensor &self, double p)
{
	op_scope scope(OP_BERNOULLI);
	(void)p;
	launch(K_BERNOULLI);
	return self;
}

// Tensor.item(): waits for the GPU (real torch copies to the host, which synchronises; a
// device synchronisation here keeps memcpy records out of the operator's GPU time).
double _local_scalar_dense::call(const Tensor &self)
{
	op_scope scope(OP_LOCAL_SCALAR_DENSE);
	(void)self;
	note(cudaDeviceSynchronize());
	return 0.0;
}

} // namespace _ops
} // namespace at

namespace
{
at::Tensor x, w, b;
}

// ---- the C interface Python calls through ctypes ----

EXPORT const char *aten_like_kernel_spec(void)
{
	static char spec[1024];
	size_t used = 0;
	for (int k = 0; k < K_COUNT; k++)
		used +=
		    (size_t)snprintf(spec + used, sizeof(spec) - used, "%s%s=%llu", k ? "," : "",
				     kernels[k].mangled, (unsigned long long)kernels[k].ns);
	return spec;
}

EXPORT int aten_like_init(void)
{
	cudaError_t e = cudaMalloc((void **)&device_buf, buf_floats * sizeof(float));
	if (e != cudaSuccess)
		return (int)e;
	x = at::Tensor{device_buf, buf_floats};
	w = x;
	b = x;
	return 0;
}

EXPORT int aten_like_finish(void)
{
	note(cudaDeviceSynchronize());
	note(cudaFree(device_buf));
	return (int)first_error;
}

EXPORT void aten_like_linear(int bias)
{
	at::_ops::linear::call(x, w, bias ? &b : nullptr);
}
EXPORT void aten_like_add_scalar(double v)
{
	at::_ops::add_Scalar::call(x, v, 1.0);
}
EXPORT void aten_like_softmax(void)
{
	at::_ops::softmax_int::call(x, -1);
}
EXPORT void aten_like_view(long size)
{
	at::_ops::view::call(x, size);
}
EXPORT void aten_like_dropout(double p)
{
	at::_ops::dropout::call(x, p, true);
}
EXPORT double aten_like_item(void)
{
	return at::_ops::_local_scalar_dense::call(x);
}
EXPORT void aten_like_outside_kernel(void)
{
	launch(K_OUTSIDE);
}

// Everything the library counted, as one JSON object:
// {"ops": [{"schema", "name", "calls", "self_kernels", "kernels", "self_kernel_ns", "kernel_ns",
//   "cpu_ns", "launch_ns", "children": {schema: calls}}], "outside_kernels",
//   "outside_kernel_ns", "kernels": {mangled: ns}}
EXPORT const char *aten_like_stats_json(void)
{
	static char out[16384];
	size_t n = 0;
#define OUT(...)                                                                                   \
	(n += (size_t)snprintf(out + n, n < sizeof(out) ? sizeof(out) - n : 0, __VA_ARGS__))
	OUT("{\"ops\": [");
	for (int i = 0; i < OP_COUNT; i++) {
		const op_stats *s = &stats[i];
		OUT("%s{\"schema\": \"%s\", \"name\": \"%s\", \"calls\": %llu, \"self_kernels\": "
		    "%llu, "
		    "\"kernels\": %llu, \"self_kernel_ns\": %llu, \"kernel_ns\": %llu, \"cpu_ns\": "
		    "%llu, \"launch_ns\": %llu, \"children\": {",
		    i ? ", " : "", ops[i].schema, ops[i].name, (unsigned long long)s->calls,
		    (unsigned long long)s->self_kernels, (unsigned long long)s->kernels,
		    (unsigned long long)s->self_kernel_ns, (unsigned long long)s->kernel_ns,
		    (unsigned long long)s->cpu_ns, (unsigned long long)s->launch_ns);
		bool first = true;
		for (int c = 0; c < OP_COUNT; c++) {
			if (!s->child_calls[c])
				continue;
			OUT("%s\"%s\": %llu", first ? "" : ", ", ops[c].schema,
			    (unsigned long long)s->child_calls[c]);
			first = false;
		}
		OUT("}}");
	}
	OUT("], \"outside_kernels\": %llu, \"outside_kernel_ns\": %llu, \"kernels\": {",
	    (unsigned long long)outside_kernels, (unsigned long long)outside_kernel_ns);
	for (int k = 0; k < K_COUNT; k++)
		OUT("%s\"%s\": %llu", k ? ", " : "", kernels[k].mangled,
		    (unsigned long long)kernels[k].ns);
	OUT("}}");
#undef OUT
	return n < sizeof(out) ? out : "{\"error\": \"stats did not fit\"}";
}
