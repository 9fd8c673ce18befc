/* Benchmark harness of scripts/bench_polybench.py: every kernel program includes it.
   The kernel is timed alone, best of REPS runs, each on freshly initialized arrays (so every
   run computes the same bits); the outputs' bits are printed as one FNV-1a hash, which the
   script compares across compilers. Sizes: -DMEDIUM_DATASET (default) or -DLARGE_DATASET. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef REPS
#define REPS 5
#endif

static double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint64_t bench_hash = 1469598103934665603ull;

static void bench_digest(const void *data, size_t bytes) {
  const unsigned char *p = data;
  for (size_t i = 0; i < bytes; i++)
    bench_hash = (bench_hash ^ p[i]) * 1099511628211ull;
}

static void *bench_alloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) {
    perror("aligned_alloc");
    exit(1);
  }
  return p;
}

/* INIT; then CALL timed, REPS times; then the best time and the hash of the outputs */
#define BENCH(INIT, CALL, OUTPUTS)                                        \
  do {                                                                    \
    double best = 1e300;                                                  \
    for (int rep = 0; rep < REPS; rep++) {                                \
      INIT;                                                               \
      double start = bench_now();                                         \
      CALL;                                                               \
      double elapsed = bench_now() - start;                               \
      if (elapsed < best) best = elapsed;                                 \
    }                                                                     \
    OUTPUTS;                                                              \
    printf("time %.9f\nhash %016llx\n", best, (unsigned long long)bench_hash); \
  } while (0)
