/* 3mm: G = (A*B)*(C*D) (PolyBench 4.2.1's loop shape, written for this benchmark) */
#include "harness.h"
#ifdef LARGE_DATASET
#define NI 800
#define NJ 900
#define NK 1000
#define NL 1100
#define NM 1200
#else
#define NI 180
#define NJ 190
#define NK 200
#define NL 210
#define NM 220
#endif

static void fill(int rows, int cols, double *M, int scale) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) M[i * cols + j] = (double)((i * (j + scale) + 1) % rows) / (5 * rows);
}

static void kernel_3mm(int ni, int nj, int nk, int nl, int nm, double E[NI][NJ], double A[NI][NK],
                       double B[NK][NJ], double F[NJ][NL], double C[NJ][NM], double D[NM][NL],
                       double G[NI][NL]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      E[i][j] = 0.0;
      for (int k = 0; k < nk; ++k) E[i][j] += A[i][k] * B[k][j];
    }
  for (int i = 0; i < nj; i++)
    for (int j = 0; j < nl; j++) {
      F[i][j] = 0.0;
      for (int k = 0; k < nm; ++k) F[i][j] += C[i][k] * D[k][j];
    }
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nl; j++) {
      G[i][j] = 0.0;
      for (int k = 0; k < nj; ++k) G[i][j] += E[i][k] * F[k][j];
    }
}

int main(void) {
  double(*E)[NJ] = bench_alloc(sizeof(double[NI][NJ]));
  double(*A)[NK] = bench_alloc(sizeof(double[NI][NK]));
  double(*B)[NJ] = bench_alloc(sizeof(double[NK][NJ]));
  double(*F)[NL] = bench_alloc(sizeof(double[NJ][NL]));
  double(*C)[NM] = bench_alloc(sizeof(double[NJ][NM]));
  double(*D)[NL] = bench_alloc(sizeof(double[NM][NL]));
  double(*G)[NL] = bench_alloc(sizeof(double[NI][NL]));
  BENCH((fill(NI, NK, &A[0][0], 1), fill(NK, NJ, &B[0][0], 2), fill(NJ, NM, &C[0][0], 3),
         fill(NM, NL, &D[0][0], 4)),
        kernel_3mm(NI, NJ, NK, NL, NM, E, A, B, F, C, D, G),
        bench_digest(G, sizeof(double[NI][NL])));
  return 0;
}
