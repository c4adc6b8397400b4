// The oracle for torch_abi.c's table (tests/torch_observer.bats): the offsets at which the
// inline accessors of Debian's libtorch-dev headers read at::RecordFunction's fields, and
// the size and triviality of at::RecordFunctionCallback; and for the input shapes, where
// c10::IValue keeps its tag and payload and where c10::TensorImpl keeps its key set and its
// SizesAndStrides (inline up to how many dimensions), the NestedTensor bit of a key set, and
// the exported symbol of the undefined tensor's TensorImpl. C++ because only a C++ compiler
// can read those headers; it is built (linked with libc10 for the undefined tensor's symbol)
// and run by the test, never shipped.
//
// The accessors are inline and the fields private, so each offset is found by asking the
// accessor: a zeroed buffer with a marker at one offset, read through the accessor, for
// every offset until the marker comes back.
#include <ATen/record_function.h>
#include <c10/core/TensorImpl.h>
#include <c10/core/UndefinedTensorImpl.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
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

// The same for an object of another type, from a zeroed buffer in which `prep` may set some
// bytes first (those are no candidates).
template <typename Obj, typename T, typename F, typename P>
long find_offset_in(F read, T marker, P prep)
{
	alignas(16) static unsigned char buf[sizeof(Obj)];

	for (size_t off = 0; off + sizeof(T) <= sizeof(buf); off++) {
		std::memset(buf, 0, sizeof(buf));
		prep(buf);
		if (std::memcmp(buf + off, "\0\0\0\0\0\0\0\0", sizeof(T)))
			continue; // bytes prep set: not a candidate
		std::memcpy(buf + off, &marker, sizeof(T));
		if (read(*reinterpret_cast<const Obj *>(buf)) == marker)
			return static_cast<long>(off);
	}
	return -1;
}

void no_prep(unsigned char *) {}

// Where a zeroed TensorImpl's sizes() (the default policy: no virtual call) finds its
// SizesAndStrides: the offset of its size_ word, found by a rank of 3 whose sizes() points 8
// bytes further (the inline storage); and the largest rank still kept inline.
void tensor_sizes(long *off_sizes, long *inline_max)
{
	alignas(16) static unsigned char buf[sizeof(c10::TensorImpl)];
	const auto *t = reinterpret_cast<const c10::TensorImpl *>(buf);
	static int64_t out_of_line[64];

	*off_sizes = -1;
	*inline_max = -1;
	for (size_t off = 0; off + 16 <= sizeof(buf); off += 8) {
		uint64_t rank = 3;

		std::memset(buf, 0, sizeof(buf));
		std::memcpy(buf + off, &rank, 8);
		auto sizes = t->sizes();
		if (sizes.size() == 3 &&
		    sizes.data() == reinterpret_cast<const int64_t *>(buf + off + 8)) {
			*off_sizes = static_cast<long>(off);
			break;
		}
	}
	if (*off_sizes < 0)
		return;
	for (uint64_t rank = 1; rank < 64; rank++) {
		int64_t *p = out_of_line;

		std::memset(buf, 0, sizeof(buf));
		std::memcpy(buf + *off_sizes, &rank, 8);
		std::memcpy(buf + *off_sizes + 8, &p, sizeof(p));
		if (t->sizes().data() == out_of_line) {
			*inline_max = static_cast<long>(rank) - 1;
			return;
		}
	}
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
	std::printf("\"off_seq_nr\": %ld, \"off_fwd_tid\": %ld, \"off_scope\": %ld, ",
		    find_offset<int64_t>([](const at::RecordFunction &r) { return r.seqNr(); },
					 0x1122334455667788),
		    find_offset<uint64_t>(
			[](const at::RecordFunction &r) { return r.forwardThreadId(); },
			0x8877665544332211u),
		    find_offset<uint8_t>(
			[](const at::RecordFunction &r) { return static_cast<uint8_t>(r.scope()); },
			0x5a));

	// inputs(): an ArrayRef<const IValue> (data, size), valid when needsInputs(); and
	// needsInputs(true)'s byte in a RecordFunctionCallback
	std::printf(
	    "\"off_needs_inputs\": %ld, \"off_inputs\": %ld, \"off_inputs_size\": %ld, ",
	    find_offset<bool>([](const at::RecordFunction &r) { return r.needsInputs(); }, true),
	    find_offset<uintptr_t>(
		[](const at::RecordFunction &r) {
			return reinterpret_cast<uintptr_t>(r.inputs().data());
		},
		0x0000123456789ab0),
	    find_offset<size_t>([](const at::RecordFunction &r) { return r.inputs().size(); },
				0x3344556677));
	{
		// built in zeroed storage, so that padding compares equal
		alignas(16) unsigned char a[sizeof(at::RecordFunctionCallback)] = {};
		alignas(16) unsigned char b[sizeof(at::RecordFunctionCallback)] = {};
		long at_byte = -1;

		new (a) at::RecordFunctionCallback(nullptr, nullptr);
		(new (b) at::RecordFunctionCallback(nullptr, nullptr))->needsInputs(true);
		for (size_t i = 0; i < sizeof(a); i++)
			if (a[i] != b[i])
				at_byte = at_byte == -1 ? static_cast<long>(i) : -2;
		std::printf("\"callback_off_needs_inputs\": %ld, ", at_byte);
	}

	// c10::IValue: its tag (a private enum class, read through isTensor()) and payload
	long off_tag = find_offset_in<c10::IValue>(
	    [](const c10::IValue &v) { return v.isTensor() ? 1u : 0u; }, 1u, no_prep);
	long tag_tensor = -1;
	for (uint32_t v = 0; off_tag >= 0 && v < 64 && tag_tensor < 0; v++) {
		alignas(16) unsigned char buf[sizeof(c10::IValue)] = {};
		std::memcpy(buf + off_tag, &v, sizeof(v));
		if (reinterpret_cast<const c10::IValue *>(buf)->isTensor())
			tag_tensor = v;
	}
	static long tag_at = off_tag;
	long off_payload = find_offset_in<c10::IValue>(
	    [](const c10::IValue &v) {
		    return reinterpret_cast<uintptr_t>(v.unsafeToTensorImpl());
	    },
	    static_cast<uintptr_t>(0x1234567890a8),
	    [](unsigned char *b) {
		    uint32_t t = 1;
		    std::memcpy(b + tag_at, &t, sizeof(t));
	    });
	long off_key_set = find_offset_in<c10::TensorImpl>(
	    [](const c10::TensorImpl &t) { return t.key_set().raw_repr(); },
	    static_cast<uint64_t>(0x0102030405060708), no_prep);
	long off_sizes, inline_max;
	tensor_sizes(&off_sizes, &inline_max);
	std::printf("\"ivalue_size\": %zu, \"off_ivalue_tag\": %ld, \"ivalue_tag_tensor\": %ld, "
		    "\"off_ivalue_payload\": %ld, \"off_impl_key_set\": %ld, "
		    "\"off_impl_sizes\": %ld, \"sizes_inline_max\": %ld, "
		    "\"nested_key_mask\": %llu, \"undefined_impl_symbol\": %s}\n",
		    sizeof(c10::IValue), off_tag, tag_tensor, off_payload, off_key_set, off_sizes,
		    inline_max,
		    static_cast<unsigned long long>(
			c10::DispatchKeySet(c10::DispatchKey::NestedTensor).raw_repr()),
		    // an undefined tensor's TensorImpl is this object, exported by libc10
		    static_cast<void *>(c10::UndefinedTensorImpl::singleton()) ==
			    dlsym(RTLD_DEFAULT, "_ZN3c1019UndefinedTensorImpl10_singletonE")
			? "\"_ZN3c1019UndefinedTensorImpl10_singletonE\""
			: "null");
	return 0;
}
