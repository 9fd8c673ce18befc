/* The in-cache roofs of one core, for bench.py's "core" column: built with gcc -O3
 * -march=native -ffp-contract=off (no OpenMP: one core), like the triad not part of the
 * kernel corpus.
 * core_flops: CHAINS independent chains of x = x * m + c, a multiply and an add each (not
 * contracted into an FMA), which the vectorizer spreads over every FP pipe at the target's
 * width: the double-precision flop rate of stencil arithmetic. 2 * CHAINS * reps flops.
 * 48 chains are 12 independent 256-bit vectors, enough to hide the multiply-add latency on
 * AVX2 cores (checked in the assembly); with 512-bit vectors they are 6, and the rate may be
 * latency-bound, under the true peak (the core column then reads high).
 * core_loads: sums an L1-resident array of n 8-byte integers (n a multiple of CHAINS) with
 * CHAINS accumulators; the integer adds run beside the loads on the vector ALUs, so the load
 * ports bound it: the rate of 8-byte elements read from L1. n * reps elements. */
#define CHAINS 48

double core_flops(long reps, double m, double c)
{
  double x[CHAINS];
  int k;
  long r;

  for (k = 0; k < CHAINS; k++)
    x[k] = k;
  for (r = 0; r < reps; r++)
    for (k = 0; k < CHAINS; k++)
      x[k] = x[k] * m + c;
  double s = 0;
  for (k = 0; k < CHAINS; k++)
    s += x[k];
  return s;
}

long core_loads(long reps, long n, const long *a)
{
  long s[CHAINS] = {0};
  long i, r, t = 0;
  int k;

  for (r = 0; r < reps; r++)
    for (i = 0; i < n; i += CHAINS)
      for (k = 0; k < CHAINS; k++)
        s[k] += a[i + k];
  for (k = 0; k < CHAINS; k++)
    t += s[k];
  return t;
}

/* The chains per call, for bench.py. */
int core_chains(void)
{
  return CHAINS;
}
