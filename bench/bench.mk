# Benchmark tools that need BPF, included from the top-level Makefile after its variables and
# pattern rules. bench/run.sh and bench/cuda_bench.sh use them.
#
#   $(BUILD)/bench/empty_probes   empty BPF programs where gpuspy attaches its own: entry + return
#                                 uprobes on the CUDA API, session uprobes on PyTorch operators,
#                                 tp_btf sys_enter/sys_exit, tp_btf sched_switch (the floors that
#                                 bench/run.sh's table measures gpuspy against)
#   $(BUILD)/bench/idle_thread_inject.so   the CUPTI bridge's untraced-cost baseline
#   $(BUILD)/bench/py_stack_cost  an empty uprobe or gpuspy's Python stack walker on one hook
#                                 (bench/py_stack_cost.sh, run by bench/ops_bench.sh)

BENCH_TOOLS := $(BUILD)/bench/empty_probes $(BUILD)/bench/idle_thread_inject.so \
	$(BUILD)/bench/py_stack_cost

# The Makefile's `bench/*.c` wildcard also matches the BPF source: its object is not a program.
BENCH_BINS := $(filter-out %.bpf %/idle_thread_inject,$(BENCH_BINS))

# the CUPTI bridge's untraced-cost baseline: an injection library that starts an idle thread
$(BUILD)/bench/idle_thread_inject.so: bench/idle_thread_inject.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -fPIC -shared $< -lpthread -o $@

$(BUILD)/bench/empty_probes.bpf.o: bench/empty_probes.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/empty_probes.skel.h: $(BUILD)/bench/empty_probes.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name empty_probes_bpf > $@

# attached like gpuspy's own probes: the same ELF and operator lookups and uprobe_multi links
$(BUILD)/bench/empty_probes: bench/empty_probes.c loader/proc/elf_symbols.c loader/session/uprobe_multi.c loader/probes/op_symbols.c \
		$(BUILD)/empty_probes.skel.h output/trace/cuda_probe_list.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(filter %.c,$^) $(LDLIBS) -o $@

$(BUILD)/bench/py_stack_cost.bpf.o: bench/py_stack_cost.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/py_stack_cost.skel.h: $(BUILD)/bench/py_stack_cost.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name py_stack_cost_bpf > $@

# the interpreter found and checked by gpuspy's own code, so py_procs holds what gpuspy puts there
PY_STACK_COST_SRCS := bench/py_stack_cost.c loader/python/py_runtime.c loader/python/py_check.c loader/python/py_code.c \
	loader/proc/proc_maps.c lib/messages.c lib/key_index.c output/trace/trace_writer.c
$(BUILD)/bench/py_stack_cost: $(PY_STACK_COST_SRCS) $(BUILD)/py_stack_cost.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(filter %.c,$^) $(LDLIBS) -o $@

-include $(BUILD)/bench/empty_probes.bpf.d $(BUILD)/bench/empty_probes.d \
	$(BUILD)/bench/py_stack_cost.bpf.d $(BUILD)/bench/py_stack_cost.d
