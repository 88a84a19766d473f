/* blas.h — the BLAS library under every GEMM (nn/ops.c's cblas_sgemm): which kernel set runs,
 * who chose it, and a check of its results against the plain reference.
 *
 * Why cgnn chooses. Debian's OpenBLAS is built with DYNAMIC_ARCH: it picks a kernel set from
 * the CPU when it loads. 0.3.21 (Debian 12) does not know CPUs newer than it (Sapphire Rapids:
 * AVX-512 with AMX) and falls back to its Prescott (SSE3) kernels: sgemm at a sixth of what
 * the same library's SkylakeX kernels do on that CPU (issue 30: 19.8 against 122.9 GFLOP/s on
 * one thread). OpenBLAS reads OPENBLAS_CORETYPE once, when it loads, so the choice is made
 * before anything else runs: main() calls blas_choose_for_exec(), which compares the vector
 * width of OpenBLAS's choice with the CPU's (cpuid) and, when OpenBLAS's is narrower, sets
 * OPENBLAS_CORETYPE (AVX-512 F/BW/VL/DQ/CD: SkylakeX; AVX2 + FMA: Haswell) for main's single
 * re-execution (the same one that sets the OpenMP wait policy). The re-executed process checks
 * the chosen kernels (blas_check) on the training step's GEMM shapes against a float64
 * reference; a set that fails is dropped (OpenBLAS's own choice again, by one more re-exec)
 * and the log says so.
 *
 * What is kept as it is: a user's OPENBLAS_CORETYPE (cgnn only says when it leaves vector width
 * unused), and the library users' process (libcgnn, the Python package: a library cannot
 * re-execute its host; blas_describe says what runs and what to set).
 *
 * Determinism: the choice depends on the CPU and the environment only, so one machine, one seed
 * and one thread count still give the same bits.
 * Test hooks (tests/test_blas_choice.sh): CGNN_TEST_BLAS_NARROW=1 makes OpenBLAS's choice count as
 * SSE-only (named Prescott), so that the choice and its re-execution run on any AVX2 machine;
 * CGNN_TEST_BLAS_CHECK_FAIL=1 makes the check of the chosen kernels fail. */
#ifndef CGNN_BLAS_H
#define CGNN_BLAS_H

#include <stddef.h>
#include <stdint.h>

/* Vector widths in bits of float lanes: 128 (SSE), 256 (AVX2 + FMA), 512 (AVX-512). */
int blas_cpu_width(void);  /* the CPU's widest usable width (cpuid) */
int blas_core_width(void); /* the width of the kernel set OpenBLAS runs now (its core name) */
const char *blas_core_name(void); /* OpenBLAS's core name ("Haswell", "Prescott", ...) */

/* Called first in main(), before any thread: returns 1 when it set OPENBLAS_CORETYPE (and
 * CGNN_BLAS_CHOICE, which remembers why, for the logs) and the process must re-execute itself
 * for OpenBLAS to load with it; 0 when nothing is to change (the user's OPENBLAS_CORETYPE, a
 * choice already made, OpenBLAS's own choice already as wide as the CPU, not OpenBLAS). After
 * the re-execution, call blas_check_choice(): it verifies the chosen kernels and returns 1 when
 * they failed and the process must re-execute once more with OpenBLAS's own choice. */
int blas_choose_for_exec(void);
int blas_check_choice(void);

/* One line for the logs, `cgnn info` and `cgnn bench`: library, kernel set, who chose it and
 * why, e.g. "OpenBLAS 0.3.21, SkylakeX kernels (chosen by cgnn: OpenBLAS picked Prescott,
 * 128-bit, on a 512-bit CPU)". Returns buf. */
char *blas_describe(char *buf, size_t n);
/* 1 when the kernels run narrower than the CPU and cgnn could not change it (a user's
 * OPENBLAS_CORETYPE, a library host process, a failed check): the caller warns with
 * blas_describe. */
int blas_leaves_width_unused(void);

/* The running kernels' cblas_sgemm against a float64 reference on the training step's GEMM
 * shapes (each transpose pair the layers use, block-sized and ragged). The bound is the
 * rounding-error bound of any float32 summation order (FMA or not, any blocking):
 * |got - want| <= K u Σ_k |a_ik||b_kj| with u = 2^-24 (Higham's γ_K). Returns the worst ratio of
 * the error to that bound (<= 1 passes; a wrong kernel gives >> 1) and writes the GEMM that gave
 * it into worst (may be NULL). Single-threaded reference; 3.2 M multiply-adds (a few ms). */
double blas_check_worst(char *worst, size_t n);
/* That ratio for one product: got (M, N) against op(A) (M, K) · op(B) (K, N), row-major and
 * contiguous (trans_a: A is stored (K, M); trans_b: B is stored (N, K)). */
double blas_error_ratio(const float *got, const float *A, const float *B, int64_t M, int64_t N, int64_t K,
                        int trans_a, int trans_b);

#endif
