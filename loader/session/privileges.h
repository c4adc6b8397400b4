/* SPDX-License-Identifier: MIT */
/* What recording needs from the system, checked up front for a clear one-line error. */
#ifndef GPUSPY_PRIVILEGES_H
#define GPUSPY_PRIVILEGES_H

/* 0, or an exit code after printing why: root or CAP_BPF + CAP_PERFMON are needed. */
int privileges_check(void);
/* 0, or GS_EXIT_UNSUPPORTED when the kernel's BTF is missing. */
int privileges_check_btf(void);
/* Where kernel BTF is read from: $GPUSPY_BTF_PATH or /sys/kernel/btf/vmlinux. */
const char *privileges_btf_path(void);

#endif /* GPUSPY_PRIVILEGES_H */
