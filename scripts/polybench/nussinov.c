/* nussinov: RNA folding by dynamic programming over int scores of a char sequence
   (PolyBench 4.2.1's loop shape, written for this benchmark) */
#include "harness.h"
#ifdef LARGE_DATASET
#define N 2500
#else
#define N 500
#endif

#define max_score(s1, s2) ((s1 >= s2) ? s1 : s2)
#define match(b1, b2) (((b1) + (b2)) == 3 ? 1 : 0)

static void init(int n, char seq[N], int table[N][N]) {
  for (int i = 0; i < n; i++) seq[i] = (char)((i + 1) % 4);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) table[i][j] = 0;
}

static void kernel_nussinov(int n, char seq[N], int table[N][N]) {
  for (int i = n - 1; i >= 0; i--) {
    for (int j = i + 1; j < n; j++) {
      if (j - 1 >= 0) table[i][j] = max_score(table[i][j], table[i][j - 1]);
      if (i + 1 < n) table[i][j] = max_score(table[i][j], table[i + 1][j]);
      if (j - 1 >= 0 && i + 1 < n) {
        if (i < j - 1)
          table[i][j] = max_score(table[i][j], table[i + 1][j - 1] + match(seq[i], seq[j]));
        else
          table[i][j] = max_score(table[i][j], table[i + 1][j - 1]);
      }
      for (int k = i + 1; k < j; k++)
        table[i][j] = max_score(table[i][j], table[i][k] + table[k + 1][j]);
    }
  }
}

int main(void) {
  char *seq = bench_alloc(N);
  int(*table)[N] = bench_alloc(sizeof(int[N][N]));
  BENCH(init(N, seq, table), kernel_nussinov(N, seq, table),
        bench_digest(table, sizeof(int[N][N])));
  return 0;
}
