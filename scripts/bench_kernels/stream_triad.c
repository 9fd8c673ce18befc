/* STREAM-like triad (a = b + s * c) for the benchmark's memory bandwidth reference, built by
 * bench.py with gcc -O3 -march=native, once plain (1 thread) and once with -fopenmp.
 * Bytes per element: 24 (two 8-byte loads, one 8-byte store; like STREAM, write-allocate
 * traffic is not counted). Not part of the kernel corpus. */
void stream_triad(long n, double *restrict a, const double *restrict b,
                  const double *restrict c, double s)
{
  long i;

#pragma omp parallel for
  for (i = 0; i < n; i++)
    a[i] = b[i] + s * c[i];
}

/* An empty function: the cost of one ctypes call, printed in the header. */
void bench_nop(void)
{
}
