# Unit tests of lib/cgroup_attr.c, loader/live/prom_text.c, output/analysis/step_list.c,
# loader/live/live_waits.c, output/export/perfetto/ and loader/proc/proc_env.c, included by the
# top Makefile (it defines BUILD, USER_CFLAGS, SAN_FLAGS and msg). Each test is one program
# built from its test file and the module it tests (and what that uses: text_escape.c), with
# the sanitizers on.
$(BUILD)/unit/cgroup_attr_test: tests/unit/cgroup_attr_test.c lib/cgroup_attr.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $^ -o $@

$(BUILD)/unit/prom_text_test: tests/unit/prom_text_test.c loader/live/prom_text.c lib/text_escape.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $^ -lm -o $@

$(BUILD)/unit/step_list_test: tests/unit/step_list_test.c output/analysis/step_list.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $^ -o $@

# top's wait column: the module and what it sorts with (wait_kinds.c, the syscall and CUDA
# tables, generated ones included)
$(BUILD)/unit/live_waits_test: tests/unit/live_waits_test.c loader/live/live_waits.c \
		output/analysis/wait_kinds.c output/trace/cuda_api.c lib/key_index.c \
		lib/syscall_class.c lib/syscall_names.c $(BUILD)/syscall_table.c $(BUILD)/cuda_errors.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $^ -o $@

# the Perfetto converter under a Chrome trace of the program's own (tests/export_perfetto.bats)
$(BUILD)/unit/perfetto_gen: tests/unit/perfetto_gen.c $(wildcard output/export/perfetto/*.c)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $^ -o $@

# the rank variables of a process's environment (the Kineto export's distributedInfo)
$(BUILD)/unit/proc_env_test: tests/unit/proc_env_test.c loader/proc/proc_env.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $^ -o $@

UNIT_BINS += $(BUILD)/unit/cgroup_attr_test $(BUILD)/unit/prom_text_test \
	$(BUILD)/unit/proc_env_test $(BUILD)/unit/step_list_test $(BUILD)/unit/live_waits_test \
	$(BUILD)/unit/perfetto_gen

# gcc names the dependency file of a one-step build after the program
-include $(patsubst %,%.d,$(UNIT_BINS))
