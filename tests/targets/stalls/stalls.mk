# Make fragment for the stall workloads (tests/targets/stalls/README.md): the GPU library the
# Python workloads load through ctypes. Included from the top-level Makefile after
# tests/fakecuda/fakecuda.mk, whose compiler, flags and CUDA_HOME checks it reuses; everything
# here is prefixed STALLS_.
#
#   make stalls-targets   $(BUILD)/targets/stalls/libsteps_kernels.so (nothing, with a SKIP
#                         line, without the CUDA toolkit: the suite then skips)

STALLS_SRC := tests/targets/stalls
STALLS_OUT := $(BUILD)/targets/stalls
STALLS_LIB := $(STALLS_OUT)/libsteps_kernels.so

.PHONY: stalls-targets
ifeq ($(wildcard $(FAKECUDA_INC)/cuda.h),)
stalls-targets:
	@printf '  %-8s %s\n' SKIP "$(STALLS_LIB) (no NVIDIA headers in $(FAKECUDA_INC))"
else ifeq ($(wildcard $(FAKECUDA_NVCC)),)
stalls-targets:
	@printf '  %-8s %s\n' SKIP "$(STALLS_LIB) (no nvcc at $(FAKECUDA_NVCC))"
else
stalls-targets: $(STALLS_LIB)
endif

# Like libtorch_aten_like_cuda.so: C++ with the host compiler's warnings as errors, linked to
# libcudart.so.13 with no rpath, so LD_LIBRARY_PATH picks the fake or NVIDIA's runtime.
$(STALLS_LIB): $(STALLS_SRC)/steps_kernels.cu $(FAKECUDA_OUT)/libcudart.so
	@mkdir -p $(@D)
	$(FAKECUDA_NVCC) $(FAKECUDA_NVCC_ARCH) -no-compress -cudart shared -O2 -std=c++17 \
	    -Xcompiler -Wall,-Wextra,-Werror,-fPIC -shared -MMD -MP -MF $@.d \
	    -L$(FAKECUDA_OUT) -o $@ $<

-include $(STALLS_LIB).d
