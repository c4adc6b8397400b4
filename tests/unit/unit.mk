# Test programs built from single loader modules, included by the top Makefile (it defines BUILD,
# USER_CFLAGS, SAN_FLAGS and msg); the bats suites run them, so `make test-bats` builds $(UNIT_BINS).
#
#   $(BUILD)/unit/http_driver   loader/live/http_server.c under a stand-in collector that publishes a
#                               body every 100 ms (tests/http.bats), with the sanitizers on

# the headers are named: with several sources, the .d file gcc writes holds only the last one's
$(BUILD)/unit/http_driver: tests/unit/http_driver.c loader/live/http_server.c loader/live/http_listen.c \
		loader/live/http_server.h loader/live/http_listen.h
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) $(SAN_FLAGS) $(filter %.c,$^) -lmicrohttpd -o $@

UNIT_BINS += $(BUILD)/unit/http_driver

-include $(BUILD)/unit/http_driver.d
