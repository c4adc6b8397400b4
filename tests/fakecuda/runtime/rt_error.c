/* cudaGetErrorString / cudaGetErrorName: pure runtime, no driver call. */
#include "rt.h"

#define RT_ERRORS(X)                                                                               \
	X(cudaSuccess, "no error")                                                                 \
	X(cudaErrorInvalidValue, "invalid argument")                                               \
	X(cudaErrorMemoryAllocation, "out of memory")                                              \
	X(cudaErrorInitializationError, "initialization error")                                    \
	X(cudaErrorInvalidConfiguration, "invalid configuration argument")                         \
	X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                    \
	X(cudaErrorInsufficientDriver,                                                             \
	  "CUDA driver version is insufficient for CUDA runtime version")                          \
	X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                 \
	X(cudaErrorInvalidDevice, "invalid device ordinal")                                        \
	X(cudaErrorInvalidKernelImage, "device kernel image is invalid")                           \
	X(cudaErrorDeviceUninitialized, "invalid device context")                                  \
	X(cudaErrorInvalidResourceHandle, "invalid resource handle")                               \
	X(cudaErrorInvalidDeviceFunction, "invalid device function")                               \
	X(cudaErrorSymbolNotFound, "named symbol not found")                                       \
	X(cudaErrorNotReady, "device not ready")                                                   \
	X(cudaErrorLaunchFailure, "unspecified launch failure")                                    \
	X(cudaErrorNotSupported, "operation not supported")                                        \
	X(cudaErrorUnknown, "unknown error")

static const char *lookup(cudaError_t e, int want_name)
{
#define RT_ERR_CASE(code, text)                                                                    \
	case code:                                                                                 \
		return want_name ? #code : text;
	switch (e) {
		RT_ERRORS(RT_ERR_CASE)
	default:
		return NULL;
	}
#undef RT_ERR_CASE
}

RT_EXPORT const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
	RT_API(cudaGetErrorString, v3020);
	const char *s = lookup(error, 0);
	rt_api_end(&rt_frame_, cudaSuccess);
	return s ? s : "unrecognized error code";
}

RT_EXPORT const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
	RT_API(cudaGetErrorName, v6050);
	const char *s = lookup(error, 1);
	rt_api_end(&rt_frame_, cudaSuccess);
	return s ? s : "cudaErrorUnknown";
}
