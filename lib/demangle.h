/* SPDX-License-Identifier: MIT */
/* Kernel names for display: nvcc, cuBLAS and PyTorch kernels carry Itanium-mangled C++ names;
 * users read them demangled, as nsys and Kineto show them. */
#ifndef GPUSPY_DEMANGLE_H
#define GPUSPY_DEMANGLE_H

/* A malloc'd copy of `name` demangled, or of `name` itself when it is not a mangled C++ name
 * (a PTX or extern "C" kernel such as `noop_kernel`); NULL when out of memory. */
char *demangle(const char *name);

#endif /* GPUSPY_DEMANGLE_H */
