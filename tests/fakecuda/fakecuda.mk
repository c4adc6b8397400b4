# Make fragment for the simulated CUDA stack used by tests and benchmarks.
# Included from the top-level Makefile; everything here is prefixed FAKECUDA_
# so it cannot clash.  Assumes BUILD (default "build") and CUDA_HOME.
#
#   make fakecuda        libcuda.so.1, libcudart.so.13, libcupti.so.13 (+ .so
#                        links), libcupti_dump.so and liblate_cupti_client.so
#                        in $(BUILD)/fakecuda,
#                        nvcc target programs, libdlkernels.so, dlopen_host and
#                        libtorch_aten_like_cuda.so in $(BUILD)/targets/cuda
#   make fakecuda-test   bats tests/fakecuda.bats
#
# FAKECUDA_NVCC_ARCH selects the GPU code in the targets (the simulator never
# runs it); the default embeds sm_90 SASS plus compute_75 PTX so the same
# binaries also run on any real GPU supported by CUDA 13.

BUILD ?= build
CUDA_HOME ?= /usr/local/cuda

FAKECUDA_SRC := tests/fakecuda
FAKECUDA_OUT := $(BUILD)/fakecuda
FAKECUDA_OBJ := $(BUILD)/fakecuda/obj
FAKECUDA_TGT := $(BUILD)/targets/cuda
FAKECUDA_TGT_SRC := tests/targets/cuda
FAKECUDA_INC := $(CUDA_HOME)/include

FAKECUDA_CC ?= gcc
FAKECUDA_NVCC ?= $(CUDA_HOME)/bin/nvcc
FAKECUDA_NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 \
                      -gencode arch=compute_75,code=compute_75
FAKECUDA_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -fPIC \
                   -fvisibility=hidden -MMD -MP -I$(FAKECUDA_INC) $(FAKECUDA_EXTRA_CFLAGS)
FAKECUDA_LDFLAGS := -shared -Wl,--no-undefined $(FAKECUDA_EXTRA_LDFLAGS)

FAKECUDA_DRV_SRCS := $(wildcard $(FAKECUDA_SRC)/driver/*.c)
FAKECUDA_RT_SRCS := $(wildcard $(FAKECUDA_SRC)/runtime/*.c)
FAKECUDA_CUPTI_SRCS := $(wildcard $(FAKECUDA_SRC)/cupti/*.c)
FAKECUDA_DRV_OBJS := $(FAKECUDA_DRV_SRCS:$(FAKECUDA_SRC)/%.c=$(FAKECUDA_OBJ)/%.o)
FAKECUDA_RT_OBJS := $(FAKECUDA_RT_SRCS:$(FAKECUDA_SRC)/%.c=$(FAKECUDA_OBJ)/%.o)
FAKECUDA_CUPTI_GEN := $(FAKECUDA_OBJ)/cupti/cupti_cbid_names.c
FAKECUDA_CUPTI_OBJS := $(FAKECUDA_CUPTI_SRCS:$(FAKECUDA_SRC)/%.c=$(FAKECUDA_OBJ)/%.o) \
                       $(FAKECUDA_CUPTI_GEN:.c=.o)
FAKECUDA_DUMP_OBJ := $(FAKECUDA_OBJ)/tools/cupti_dump.o
FAKECUDA_LATE_OBJ := $(FAKECUDA_OBJ)/tools/late_cupti_client.o

FAKECUDA_LIBS := $(FAKECUDA_OUT)/libcuda.so.1 $(FAKECUDA_OUT)/libcudart.so.13 \
                 $(FAKECUDA_OUT)/libcupti.so.13
FAKECUDA_LINKS := $(FAKECUDA_OUT)/libcuda.so $(FAKECUDA_OUT)/libcudart.so \
                  $(FAKECUDA_OUT)/libcupti.so
FAKECUDA_HELPERS := $(FAKECUDA_OUT)/libcupti_dump.so $(FAKECUDA_OUT)/liblate_cupti_client.so
# dlkernels.cu is a library (no main), loaded at run time by dlopen_host.
FAKECUDA_DL_SRC := $(FAKECUDA_TGT_SRC)/dlkernels.cu
FAKECUDA_DL_LIB := $(FAKECUDA_TGT)/libdlkernels.so
FAKECUDA_DL_HOST := $(FAKECUDA_TGT)/dlopen_host
# aten_like.cu is libtorch's operator layer in miniature (at::_ops::<op>::call and schema
# strings), loaded by aten_like.py through ctypes; "torch" and "cuda" in its name as libtorch's.
FAKECUDA_ATEN_SRC := $(FAKECUDA_TGT_SRC)/aten_like.cu
FAKECUDA_ATEN_LIB := $(FAKECUDA_TGT)/libtorch_aten_like_cuda.so
FAKECUDA_TARGET_SRCS := $(filter-out $(FAKECUDA_DL_SRC) $(FAKECUDA_ATEN_SRC), \
                        $(wildcard $(FAKECUDA_TGT_SRC)/*.cu))
FAKECUDA_TARGETS := $(FAKECUDA_TARGET_SRCS:$(FAKECUDA_TGT_SRC)/%.cu=$(FAKECUDA_TGT)/%)

.PHONY: fakecuda fakecuda-test
# NVIDIA's headers and nvcc come with the CUDA toolkit, which Debian does not package: without
# it `make fakecuda` says so and succeeds, and the suites that need the simulator skip.
ifeq ($(wildcard $(FAKECUDA_INC)/cuda.h)$(wildcard $(FAKECUDA_NVCC)),)
fakecuda:
	@printf '  %-8s %s\n' SKIP "$(FAKECUDA_OUT) (no CUDA toolkit in CUDA_HOME=$(CUDA_HOME): NVIDIA's headers and nvcc)"
else ifeq ($(wildcard $(FAKECUDA_INC)/cuda.h),)
fakecuda:
	@printf '  %-8s %s\n' SKIP "$(FAKECUDA_OUT) (no NVIDIA headers in $(FAKECUDA_INC))"
else ifeq ($(wildcard $(FAKECUDA_NVCC)),)
fakecuda:
	@printf '  %-8s %s\n' SKIP "$(FAKECUDA_OUT) (no nvcc at $(FAKECUDA_NVCC))"
else
fakecuda: $(FAKECUDA_LIBS) $(FAKECUDA_LINKS) $(FAKECUDA_HELPERS) $(FAKECUDA_TARGETS) \
          $(FAKECUDA_DL_LIB) $(FAKECUDA_DL_HOST) $(FAKECUDA_ATEN_LIB)
endif

fakecuda-test: fakecuda
	bats tests/fakecuda.bats

$(FAKECUDA_OBJ)/%.o: $(FAKECUDA_SRC)/%.c
	@mkdir -p $(@D)
	$(FAKECUDA_CC) $(FAKECUDA_CFLAGS) -c $< -o $@

$(FAKECUDA_CUPTI_GEN): $(FAKECUDA_SRC)/cupti/gen_cbid_names.sh \
                       $(FAKECUDA_INC)/cupti_driver_cbid.h $(FAKECUDA_INC)/cupti_runtime_cbid.h
	@mkdir -p $(@D)
	sh $< $(FAKECUDA_INC) > $@.tmp && mv $@.tmp $@

$(FAKECUDA_CUPTI_GEN:.c=.o): $(FAKECUDA_CUPTI_GEN)
	$(FAKECUDA_CC) $(FAKECUDA_CFLAGS) -I$(FAKECUDA_SRC)/cupti -c $< -o $@

$(FAKECUDA_OUT)/libcuda.so.1: $(FAKECUDA_DRV_OBJS) $(FAKECUDA_SRC)/driver/libcuda.map
	$(FAKECUDA_CC) $(FAKECUDA_LDFLAGS) -Wl,-soname,libcuda.so.1 \
	    -Wl,--version-script=$(FAKECUDA_SRC)/driver/libcuda.map \
	    -o $@ $(FAKECUDA_DRV_OBJS) -ldl -lpthread

$(FAKECUDA_OUT)/libcudart.so.13: $(FAKECUDA_RT_OBJS) $(FAKECUDA_SRC)/runtime/libcudart.map
	$(FAKECUDA_CC) $(FAKECUDA_LDFLAGS) -Wl,-soname,libcudart.so.13 \
	    -Wl,--version-script=$(FAKECUDA_SRC)/runtime/libcudart.map \
	    -o $@ $(FAKECUDA_RT_OBJS) -ldl -lpthread

$(FAKECUDA_OUT)/libcupti.so.13: $(FAKECUDA_CUPTI_OBJS) $(FAKECUDA_SRC)/cupti/libcupti.map
	$(FAKECUDA_CC) $(FAKECUDA_LDFLAGS) -Wl,-soname,libcupti.so.13 \
	    -Wl,--version-script=$(FAKECUDA_SRC)/cupti/libcupti.map \
	    -o $@ $(FAKECUDA_CUPTI_OBJS) -ldl -lpthread

$(FAKECUDA_OUT)/libcuda.so: $(FAKECUDA_OUT)/libcuda.so.1
	ln -sf libcuda.so.1 $@
$(FAKECUDA_OUT)/libcudart.so: $(FAKECUDA_OUT)/libcudart.so.13
	ln -sf libcudart.so.13 $@
$(FAKECUDA_OUT)/libcupti.so: $(FAKECUDA_OUT)/libcupti.so.13
	ln -sf libcupti.so.13 $@

# Linked against libcupti.so.13's versioned names: runs with either CUPTI.
$(FAKECUDA_OUT)/libcupti_dump.so: $(FAKECUDA_DUMP_OBJ) $(FAKECUDA_OUT)/libcupti.so
	$(FAKECUDA_CC) $(FAKECUDA_LDFLAGS) -o $@ $(FAKECUDA_DUMP_OBJ) \
	    -L$(FAKECUDA_OUT) -lcupti -lpthread

# The CUPTI client late_cupti dlopens into itself once CUDA runs (late attach).
$(FAKECUDA_OUT)/liblate_cupti_client.so: $(FAKECUDA_LATE_OBJ) $(FAKECUDA_OUT)/libcupti.so
	$(FAKECUDA_CC) $(FAKECUDA_LDFLAGS) -o $@ $(FAKECUDA_LATE_OBJ) \
	    -L$(FAKECUDA_OUT) -lcupti -lpthread

# Real nvcc programs, dynamically linked to libcudart.so.13 with no rpath:
# LD_LIBRARY_PATH picks the fake or NVIDIA's runtime at run time.
$(FAKECUDA_TARGETS): $(FAKECUDA_TGT)/%: $(FAKECUDA_TGT_SRC)/%.cu $(FAKECUDA_OUT)/libcudart.so
	@mkdir -p $(@D)
	$(FAKECUDA_NVCC) $(FAKECUDA_NVCC_ARCH) -no-compress -cudart shared -O2 \
	    -MMD -MP -MF $@.d -L$(FAKECUDA_OUT) -o $@ $<

# The same, as a shared library for dlopen (also no rpath).
$(FAKECUDA_DL_LIB): $(FAKECUDA_DL_SRC) $(FAKECUDA_OUT)/libcudart.so
	@mkdir -p $(@D)
	$(FAKECUDA_NVCC) $(FAKECUDA_NVCC_ARCH) -no-compress -cudart shared -O2 \
	    -shared -Xcompiler -fPIC -MMD -MP -MF $@.d -L$(FAKECUDA_OUT) -o $@ $<

# C++ with warnings as errors (the host compiler's), also no rpath.
$(FAKECUDA_ATEN_LIB): $(FAKECUDA_ATEN_SRC) $(FAKECUDA_OUT)/libcudart.so
	@mkdir -p $(@D)
	$(FAKECUDA_NVCC) $(FAKECUDA_NVCC_ARCH) -no-compress -cudart shared -O2 -std=c++17 \
	    -Xcompiler -Wall,-Wextra,-Werror,-fPIC -shared -MMD -MP -MF $@.d \
	    -L$(FAKECUDA_OUT) -o $@ $<

# Plain C with only -ldl, so CUDA is loaded by nothing but its dlopen.
$(FAKECUDA_DL_HOST): $(FAKECUDA_TGT_SRC)/dlopen_host.c
	@mkdir -p $(@D)
	$(FAKECUDA_CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -MMD -MP \
	    -MF $@.d -o $@ $< -ldl

-include $(FAKECUDA_DRV_OBJS:.o=.d) $(FAKECUDA_RT_OBJS:.o=.d) \
         $(FAKECUDA_CUPTI_OBJS:.o=.d) $(FAKECUDA_DUMP_OBJ:.o=.d) $(FAKECUDA_LATE_OBJ:.o=.d) \
         $(FAKECUDA_TARGETS:=.d) $(FAKECUDA_DL_LIB).d $(FAKECUDA_DL_HOST).d \
         $(FAKECUDA_ATEN_LIB).d
