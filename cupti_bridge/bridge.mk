# The CUPTI bridge (cupti_bridge/README.md): build/libgpuspy_cupti.so, loaded into CUDA
# programs through CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH. Included from the top
# Makefile; everything here is prefixed BRIDGE_. Built against NVIDIA's CUPTI headers in
# CUDA_HOME; without them `make bridge` says so and succeeds.
#
#   make bridge    $(BRIDGE_LIB)
#   make torch-observer   $(TORCH_OBS_LIB)

BRIDGE_LIB := $(BUILD)/libgpuspy_cupti.so
BRIDGE_SRCS := $(filter-out cupti_bridge/torch_%.c,$(wildcard cupti_bridge/*.c))
BRIDGE_OBJS := $(patsubst cupti_bridge/%.c,$(BUILD)/bridge/%.o,$(BRIDGE_SRCS))
# NVIDIA's libcupti is in extras/CUPTI/lib64 in a toolkit, next to the runtime in a flat
# install: the library looks in both at run time (RUNPATH, so LD_LIBRARY_PATH, e.g. the
# tests' build/fakecuda, still comes first). It links against the first that has it, or
# against the simulated one, whose versioned names are NVIDIA's.
BRIDGE_CUPTI_DIRS := $(CUDA_HOME)/extras/CUPTI/lib64 $(CUDA_HOME)/lib64
BRIDGE_CUPTI_SO := $(firstword $(wildcard $(addsuffix /libcupti.so.13,$(BRIDGE_CUPTI_DIRS))) \
	$(BUILD)/fakecuda/libcupti.so.13)
BRIDGE_EMPTY :=
BRIDGE_RUNPATH := $(subst $(BRIDGE_EMPTY) $(BRIDGE_EMPTY),:,$(BRIDGE_CUPTI_DIRS))
BRIDGE_CFLAGS := $(CFLAGS) -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP -fPIC -fvisibility=hidden \
	-Ibpf -Icupti_bridge -isystem $(CUDA_HOME)/include
# nodelete: the control thread runs the library's code until the process exits, so a
# dlclose (NVTX unloads an injection it gave up on) must never unmap it.
BRIDGE_LDFLAGS := -shared -Wl,--no-undefined -Wl,-z,nodelete -Wl,--enable-new-dtags \
	-Wl,-rpath,$(BRIDGE_RUNPATH)

.PHONY: bridge
ifeq ($(wildcard $(CUDA_HOME)/include/cupti.h),)
bridge:
	@printf '  %-8s %s\n' SKIP "$(BRIDGE_LIB) (no CUPTI headers in CUDA_HOME=$(CUDA_HOME))"
else
bridge: $(BRIDGE_LIB)

$(BUILD)/bridge/%.o: cupti_bridge/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BRIDGE_CFLAGS) -c $< -o $@

$(BRIDGE_LIB): $(BRIDGE_OBJS) $(BRIDGE_CUPTI_SO)
	$(call msg,LD,$@)
	$(Q)$(CC) $(BRIDGE_CFLAGS) $(BRIDGE_LDFLAGS) $(BRIDGE_OBJS) $(BRIDGE_CUPTI_SO) -lpthread -o $@
endif

-include $(BRIDGE_OBJS:.o=.d)

# The in-process PyTorch operator observer (docs/TORCH_OBSERVER.md): a library of its own, not
# part of the CUPTI bridge, because it must load into CPU-only torch processes, which have no
# libcupti for the bridge's DT_NEEDED, and build without NVIDIA's headers. Same flags, same
# nodelete rule: libtorch keeps the callback pointers it was given.
TORCH_OBS_LIB := $(BUILD)/libgpuspy_torch.so
# the USDT probes, batching, statuses and record helpers are the bridge's own files, built
# into both libraries: the observer speaks the bridge's protocol (torch_send.c)
TORCH_OBS_SRCS := $(wildcard cupti_bridge/torch_*.c) $(addprefix cupti_bridge/,usdt.c batch.c \
	status.c rec.c)
TORCH_OBS_OBJS := $(patsubst cupti_bridge/%.c,$(BUILD)/torch_obs/%.o,$(TORCH_OBS_SRCS))
TORCH_OBS_CFLAGS := $(CFLAGS) -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP -fPIC -fvisibility=hidden \
	-Ibpf -Icupti_bridge -DGS_BATCH_STREAM=GS_GPU_BATCH_STREAM_TORCH

.PHONY: torch-observer
torch-observer: $(TORCH_OBS_LIB)

$(BUILD)/torch_obs/%.o: cupti_bridge/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(TORCH_OBS_CFLAGS) -c $< -o $@

$(TORCH_OBS_LIB): $(TORCH_OBS_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(TORCH_OBS_CFLAGS) -shared -Wl,--no-undefined -Wl,-z,nodelete $^ -lpthread -ldl -o $@

-include $(TORCH_OBS_OBJS:.o=.d)
