/* gemm: C = alpha*A*B + beta*C (PolyBench 4.2.1's loop shape, written for this benchmark) */
#include "harness.h"
#ifdef LARGE_DATASET
#define NI 1000
#define NJ 1100
#define NK 1200
#else
#define NI 200
#define NJ 220
#define NK 240
#endif

static void init(int ni, int nj, int nk, double C[NI][NJ], double A[NI][NK], double B[NK][NJ]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) C[i][j] = (double)((i * j + 1) % ni) / ni;
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++) A[i][k] = (double)(i * (k + 1) % nk) / nk;
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++) B[k][j] = (double)(k * (j + 2) % nj) / nj;
}

static void kernel_gemm(int ni, int nj, int nk, double alpha, double beta, double C[NI][NJ],
                        double A[NI][NK], double B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

int main(void) {
  double(*C)[NJ] = bench_alloc(sizeof(double[NI][NJ]));
  double(*A)[NK] = bench_alloc(sizeof(double[NI][NK]));
  double(*B)[NJ] = bench_alloc(sizeof(double[NK][NJ]));
  BENCH(init(NI, NJ, NK, C, A, B), kernel_gemm(NI, NJ, NK, 1.5, 1.2, C, A, B),
        bench_digest(C, sizeof(double[NI][NJ])));
  return 0;
}
