/* cuptiGetResultString: the result codes this library returns, plus the
 * common ones a client may ask about. */
#include "cupti_internal.h"

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	switch (result) {
#define R(code, text)                                                                              \
	case code:                                                                                 \
		*str = #code ": " text;                                                            \
		return CUPTI_SUCCESS;
		R(CUPTI_SUCCESS, "no error")
		R(CUPTI_ERROR_INVALID_PARAMETER, "invalid parameter")
		R(CUPTI_ERROR_INVALID_DEVICE, "invalid device")
		R(CUPTI_ERROR_INVALID_CONTEXT, "invalid context")
		R(CUPTI_ERROR_INVALID_KIND, "invalid kind")
		R(CUPTI_ERROR_MAX_LIMIT_REACHED, "maximum limit reached")
		R(CUPTI_ERROR_NOT_INITIALIZED, "not initialized")
		R(CUPTI_ERROR_NOT_READY, "not ready")
		R(CUPTI_ERROR_QUEUE_EMPTY, "queue empty")
		R(CUPTI_ERROR_NOT_SUPPORTED, "not supported")
		R(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
		  "multiple subscribers not supported")
		R(CUPTI_ERROR_UNKNOWN, "unknown error")
#undef R
	default:
		*str = NULL;
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
}
