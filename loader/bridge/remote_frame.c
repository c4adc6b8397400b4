// SPDX-License-Identifier: MIT
/* The rt_sigreturn frame a remote call returns through (remote_frame.h). */
#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "loader/bridge/remote_frame.h"
#include "loader/proc/proc_mem.h"

#define SYSCALL_INSN_LEN 2 /* `syscall` is 0f 05 */
/* the kernel's restart codes (include/linux/errno.h), never seen by user space */
#define ERESTARTSYS	      512
#define ERESTARTNOINTR	      513
#define ERESTARTNOHAND	      514
#define ERESTART_RESTARTBLOCK 516
/* uc_flags (arch/x86/include/uapi/asm/ucontext.h) */
#define UC_FP_XSTATE	     0x1
#define UC_SIGCONTEXT_SS     0x2
#define UC_STRICT_RESTORE_SS 0x4
/* the software bytes of an XSAVE area in a signal frame (uapi asm/sigcontext.h) */
#define FP_XSTATE_MAGIC1  0x46505853u
#define FP_XSTATE_MAGIC2  0x46505845u
#define FXSAVE_SIZE	  512
#define XSAVE_HDR_SIZE	  64
#define SW_BYTES_OFFSET	  464 /* fxregs_state.sw_reserved */
#define XFEATURES_FP_SSE  0x3ull
#define XSTATE_CPUID	  0xd
#define FPSTATE_ALIGN	  64 /* XRSTOR's */
#define FRAME_MAX_FPSTATE (64 * 1024)
#define RESTORER_CHUNK	  (64 * 1024)
#define SS_INVALID_MODE	  3 /* SS_ONSTACK | SS_DISABLE: refused by sigaltstack */

/* The kernel's x86_64 rt_sigframe as rt_sigreturn reads it: arch/x86/include/asm/sigframe.h,
 * uapi asm/sigcontext.h (struct sigcontext) and asm-generic/ucontext.h. glibc's ucontext_t
 * is another layout (a 128-byte sigset), so the kernel's is spelled out here. */
struct k_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;
	uint64_t reserved1[8];
};

struct k_stack {
	uint64_t sp;
	int32_t flags;
	int32_t pad;
	uint64_t size;
};

struct k_ucontext {
	uint64_t flags;
	uint64_t link;
	struct k_stack stack;
	struct k_sigcontext mcontext;
	uint64_t sigmask;
};

struct k_rt_sigframe {
	uint64_t pretcode;
	struct k_ucontext uc;
	unsigned char info[128]; /* siginfo: part of the frame, not read by rt_sigreturn */
};

struct fpx_sw_bytes {
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

_Static_assert(sizeof(struct k_sigcontext) == 256, "struct sigcontext is 256 bytes");
_Static_assert(sizeof(struct k_ucontext) == 304, "the kernel's ucontext is 304 bytes");
_Static_assert(sizeof(struct fpx_sw_bytes) == 48, "_fpx_sw_bytes is 48 bytes");

void remote_frame_resume_regs(const struct user_regs_struct *saved, bool at_entry,
			      bool restart_block, struct user_regs_struct *out)
{
	*out = *saved;
	out->orig_rax = -1ull;
	if (at_entry) {
		out->rip -= SYSCALL_INSN_LEN;
		out->rax = saved->orig_rax;
		return;
	}
	if ((long long)saved->orig_rax < 0)
		return;
	switch (-(long long)saved->rax) {
	case ERESTARTSYS:
	case ERESTARTNOINTR:
	case ERESTARTNOHAND:
		out->rip -= SYSCALL_INSN_LEN;
		out->rax = saved->orig_rax;
		break;
	case ERESTART_RESTARTBLOCK:
		out->rip -= SYSCALL_INSN_LEN;
		out->rax = restart_block ? (uint64_t)SYS_restart_syscall : saved->orig_rax;
		break;
	default:
		break;
	}
}

/* The end of the standard-format XSAVE area that holds `xfeatures` (CPUID leaf 0xd: each
 * component's size and offset). The XSAVE state of gpuspy's CPU is the thread's: same host. */
static size_t xsave_size_of(uint64_t xfeatures)
{
	size_t end = FXSAVE_SIZE + XSAVE_HDR_SIZE;

	for (unsigned i = 2; i < 64; i++) {
		unsigned size, offset, ecx, edx;

		if (!(xfeatures & (1ull << i)))
			continue;
		__cpuid_count(XSTATE_CPUID, i, size, offset, ecx, edx);
		if (offset + size > end)
			end = offset + size;
	}
	return end;
}

/*
 * The FPU part of the frame: the XSAVE area with the software bytes rt_sigreturn checks
 * (fpu/signal.c: check_xstate_in_sigframe). Its size covers exactly the components in use at
 * the safe point (XSTATE_BV): the kernel refuses a larger size than the task's own state, and
 * components left out are put back in their initial state, which is where they were.
 */
static unsigned char *fpstate_image(const void *xstate, size_t xstate_len, bool fxsave_only,
				    size_t *len)
{
	struct fpx_sw_bytes sw = {0};
	unsigned char *img;
	uint64_t bv = 0;
	uint32_t magic2 = FP_XSTATE_MAGIC2;
	size_t size;

	if (xstate_len < FXSAVE_SIZE)
		return NULL;
	if (fxsave_only || xstate_len < FXSAVE_SIZE + XSAVE_HDR_SIZE) {
		size = FXSAVE_SIZE; /* magic1 0: restored as FXSAVE state */
	} else {
		memcpy(&bv, (const unsigned char *)xstate + FXSAVE_SIZE, sizeof(bv));
		bv |= XFEATURES_FP_SSE;
		size = xsave_size_of(bv);
		if (size > xstate_len || size + sizeof(magic2) > FRAME_MAX_FPSTATE)
			return NULL;
		sw.magic1 = FP_XSTATE_MAGIC1;
		sw.xstate_size = (uint32_t)size;
		sw.extended_size = (uint32_t)(size + sizeof(magic2));
		sw.xfeatures = bv;
	}
	img = calloc(1, size + sizeof(magic2));
	if (!img)
		return NULL;
	memcpy(img, xstate, size);
	memcpy(img + SW_BYTES_OFFSET, &sw, sizeof(sw));
	if (sw.magic1)
		memcpy(img + size, &magic2, sizeof(magic2));
	*len = size + sizeof(magic2);
	return img;
}

static void fill_sigcontext(struct k_sigcontext *sc, const struct user_regs_struct *r)
{
	sc->r8 = r->r8;
	sc->r9 = r->r9;
	sc->r10 = r->r10;
	sc->r11 = r->r11;
	sc->r12 = r->r12;
	sc->r13 = r->r13;
	sc->r14 = r->r14;
	sc->r15 = r->r15;
	sc->rdi = r->rdi;
	sc->rsi = r->rsi;
	sc->rbp = r->rbp;
	sc->rbx = r->rbx;
	sc->rdx = r->rdx;
	sc->rax = r->rax;
	sc->rcx = r->rcx;
	sc->rsp = r->rsp;
	sc->rip = r->rip;
	sc->eflags = r->eflags;
	sc->cs = (uint16_t)r->cs;
	sc->ss = (uint16_t)r->ss;
}

int remote_frame_write(pid_t pid, uint64_t below, uint64_t restorer,
		       const struct user_regs_struct *resume, const void *xstate, size_t xstate_len,
		       bool fxsave_only, uint64_t sigmask, uint64_t *entry_sp)
{
	struct k_rt_sigframe f;
	unsigned char *fp;
	size_t fp_len = 0;
	uint64_t fp_addr, frame;
	int err;

	fp = fpstate_image(xstate, xstate_len, fxsave_only, &fp_len);
	if (!fp)
		return -EINVAL;
	fp_addr = (below - fp_len) & ~(uint64_t)(FPSTATE_ALIGN - 1);
	/* as the kernel places a frame: the handler is entered with (sp + 8) 16-byte aligned */
	frame = ((fp_addr - sizeof(f)) & ~15ull) - 8;
	memset(&f, 0, sizeof(f));
	f.pretcode = restorer;
	f.uc.flags = (fxsave_only ? 0 : UC_FP_XSTATE) | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	/* rt_sigreturn sets the alternate signal stack from the frame and ignores a refusal:
	 * an invalid mode leaves the thread's own, which gpuspy cannot read, as it is */
	f.uc.stack.flags = SS_INVALID_MODE;
	fill_sigcontext(&f.uc.mcontext, resume);
	f.uc.mcontext.fpstate = fp_addr;
	f.uc.sigmask = sigmask;
	err = proc_mem_write(pid, fp_addr, fp, fp_len);
	free(fp);
	err = err ?: proc_mem_write(pid, frame, &f, sizeof(f));
	if (!err)
		*entry_sp = frame;
	return err;
}

uint64_t remote_frame_find_restorer(pid_t pid, uint64_t start, uint64_t end)
{
	static const unsigned char code[REMOTE_RESTORER_LEN] = {0x48, 0xc7, 0xc0, 0x0f, 0x00,
								0x00, 0x00, 0x0f, 0x05};
	unsigned char *buf = malloc(RESTORER_CHUNK);
	uint64_t found = 0;

	for (uint64_t at = start; buf && at + sizeof(code) <= end && !found;) {
		size_t want = end - at < RESTORER_CHUNK ? (size_t)(end - at) : RESTORER_CHUNK;
		unsigned char *hit;

		if (proc_mem_read(pid, at, buf, want))
			break;
		hit = memmem(buf, want, code, sizeof(code));
		if (hit)
			found = at + (uint64_t)(hit - buf);
		/* overlap the chunks by the pattern's length less one */
		at += want - (sizeof(code) - 1);
	}
	free(buf);
	return found;
}
