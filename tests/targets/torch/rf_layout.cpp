// The oracle for torch_abi.c's table (tests/torch_observer.bats): the offsets at which the
// inline accessors of Debian's libtorch-dev headers read at::RecordFunction's fields, and
// the size and triviality of at::RecordFunctionCallback. C++ because only a C++ compiler can
// read those headers; it is built and run by the test, never shipped.
//
// The accessors are inline and the fields private, so each offset is found by asking the
// accessor: a zeroed buffer with a marker at one offset, read through the accessor, for
// every offset until the marker comes back.
#include <ATen/record_function.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace {

template <typename T, typename F> long find_offset(F read, T marker)
{
	alignas(16) static unsigned char buf[sizeof(at::RecordFunction)];

	for (size_t off = 0; off + sizeof(T) <= sizeof(buf); off++) {
		std::memset(buf, 0, sizeof(buf));
		std::memcpy(buf + off, &marker, sizeof(T));
		const auto *rf = reinterpret_cast<const at::RecordFunction *>(buf);
		if (read(*rf) == marker)
			return static_cast<long>(off);
	}
	return -1;
}

} // namespace

int main()
{
	std::printf("{\"callback_size\": %zu, \"callback_trivially_copyable\": %s, "
		    "\"callback_trivially_destructible\": %s, \"record_function_size\": %zu, ",
		    sizeof(at::RecordFunctionCallback),
		    std::is_trivially_copyable<at::RecordFunctionCallback>::value ? "true"
										  : "false",
		    std::is_trivially_destructible<at::RecordFunctionCallback>::value ? "true"
										      : "false",
		    sizeof(at::RecordFunction));
	std::printf("\"off_seq_nr\": %ld, \"off_fwd_tid\": %ld, \"off_scope\": %ld}\n",
		    find_offset<int64_t>([](const at::RecordFunction &r) { return r.seqNr(); },
					 0x1122334455667788),
		    find_offset<uint64_t>(
			[](const at::RecordFunction &r) { return r.forwardThreadId(); },
			0x8877665544332211u),
		    find_offset<uint8_t>(
			[](const at::RecordFunction &r) { return static_cast<uint8_t>(r.scope()); },
			0x5a));
	return 0;
}
