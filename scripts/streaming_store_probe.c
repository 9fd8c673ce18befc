/* Do non-temporal (streaming) stores pay for a single sweep on this machine? Issue 19 asks for
 * them on outputs not re-read soon. A laplace-2d sweep (scripts/bench_kernels/laplace_2d.c's
 * arithmetic, doubles) written plainly and with 32-byte-aligned _mm256_stream_pd stores (each
 * row's head and tail scalar), timed best of 7 on an n x n grid, outputs compared bit for bit.
 * x86 with AVX only (a measurement, not part of the compiler):
 *
 *   gcc -O3 -march=native -ffp-contract=off [-fopenmp] scripts/streaming_store_probe.c -o probe
 *   [OMP_NUM_THREADS=2] ./probe 4000
 *
 * Results: docs/tiling_benchmarks.md ("Streaming stores"). */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double point(int m, const double in[][m], int i, int j)
{
  return 0.5 * in[i][j] + 0.125 * (in[i - 1][j] + in[i + 1][j] + in[i][j - 1] + in[i][j + 1]);
}

__attribute__((noinline)) static void plain(int n, int m, const double in[n][m], double out[n][m])
{
#pragma omp parallel for
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      out[i][j] = point(m, in, i, j);
}

__attribute__((noinline)) static void streamed(int n, int m, const double in[n][m],
                                               double out[n][m])
{
#pragma omp parallel for
  for (int i = 1; i < n - 1; i++) {
    int j = 1;
    for (; j < m - 1 && ((uintptr_t)&out[i][j] & 31); j++)
      out[i][j] = point(m, in, i, j);
    for (; j + 4 <= m - 1; j += 4) {
      __m256d sum = _mm256_add_pd(_mm256_loadu_pd(&in[i - 1][j]), _mm256_loadu_pd(&in[i + 1][j]));
      sum = _mm256_add_pd(sum, _mm256_loadu_pd(&in[i][j - 1]));
      sum = _mm256_add_pd(sum, _mm256_loadu_pd(&in[i][j + 1]));
      __m256d centre = _mm256_mul_pd(_mm256_set1_pd(0.5), _mm256_loadu_pd(&in[i][j]));
      _mm256_stream_pd(&out[i][j], _mm256_add_pd(centre, _mm256_mul_pd(_mm256_set1_pd(0.125), sum)));
    }
    for (; j < m - 1; j++)
      out[i][j] = point(m, in, i, j);
  }
  _mm_sfence();
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 4000, m = n;
  size_t bytes = ((sizeof(double) * n * m + 63) / 64) * 64;
  double(*in)[m] = aligned_alloc(64, bytes), (*a)[m] = aligned_alloc(64, bytes),
  (*b)[m] = aligned_alloc(64, bytes);
  for (long k = 0; k < (long)n * m; k++) {
    ((double *)in)[k] = (k % 17) * 0.1;
    ((double *)a)[k] = ((double *)b)[k] = 0;
  }
  for (int variant = 0; variant < 2; variant++) {
    double best = 1e9;
    for (int rep = 0; rep < 7; rep++) {
      double t0 = now();
      if (variant)
        streamed(n, m, (const double(*)[m])in, b);
      else
        plain(n, m, (const double(*)[m])in, a);
      double t = now() - t0;
      best = t < best ? t : best;
    }
    printf("%-8s n=%d %.2f ms %.3f GSt/s\n", variant ? "streamed" : "plain", n, best * 1e3,
           (double)(n - 2) * (m - 2) / best / 1e9);
  }
  long differ = 0;
  for (long k = 0; k < (long)n * m; k++)
    differ += ((double *)a)[k] != ((double *)b)[k];
  printf("elements that differ: %ld\n", differ);
  return differ != 0;
}
