#!/usr/bin/env python3
"""Runs a command with ptrace(2) refused: a seccomp filter makes every ptrace call fail with
EPERM, as a container runtime's seccomp profile or an LSM does, and leaves every other system
call alone (so /proc/PID/maps, /proc/PID/mem and process_vm_readv keep working, unlike when
CAP_SYS_PTRACE is dropped: the kernel's access check for those is the same as ptrace's).
The filter is inherited by the command's children.

usage: check_inject_no_ptrace.py [--check] COMMAND [ARGS...]
--check: first verify in a child that ptrace(PTRACE_ATTACH) of its parent fails with EPERM."""
import ctypes as C
import errno
import os
import struct
import sys

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64 = 0xC000003E, 0xC00000B7
NR_PTRACE = {"x86_64": 101, "aarch64": 117}
ARCH = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}
BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
PTRACE_ATTACH = 16

libc = C.CDLL(None, use_errno=True)


class SockFprog(C.Structure):
    _fields_ = [("len", C.c_ushort), ("filter", C.c_void_p)]


def insn(code, jt, jf, k):
    return struct.pack("=HBBI", code, jt, jf, k)


def install():
    machine = os.uname().machine
    if machine not in NR_PTRACE:
        sys.exit("check_inject_no_ptrace: unsupported architecture %s" % machine)
    prog = b"".join([
        insn(BPF_LD_W_ABS, 0, 0, 4),                 # seccomp_data.arch
        insn(BPF_JEQ_K, 1, 0, ARCH[machine]),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),    # another ABI: not ours to judge
        insn(BPF_LD_W_ABS, 0, 0, 0),                 # seccomp_data.nr
        insn(BPF_JEQ_K, 0, 1, NR_PTRACE[machine]),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ])
    buf = C.create_string_buffer(prog)
    fprog = SockFprog(len(prog) // 8, C.cast(buf, C.c_void_p))
    # root (CAP_SYS_ADMIN) may install a filter without no_new_privs
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, C.byref(fprog), 0, 0) != 0:
        sys.exit("check_inject_no_ptrace: prctl(PR_SET_SECCOMP): %s"
                 % os.strerror(C.get_errno()))


def check():
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        r = libc.ptrace(PTRACE_ATTACH, parent, None, None)
        os._exit(0 if r == -1 and C.get_errno() == errno.EPERM else 1)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit("check_inject_no_ptrace: ptrace was not refused with EPERM")


def main():
    args = sys.argv[1:]
    want_check = args[:1] == ["--check"]
    if want_check:
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    install()
    if want_check:
        check()
    os.execvp(args[0], args)


if __name__ == "__main__":
    main()
