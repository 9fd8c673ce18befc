/* floyd-warshall: all-pairs shortest paths on int weights (PolyBench 4.2.1's loop shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define N 2800
#else
#define N 500
#endif

static void init(int n, int path[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      path[i][j] = i * j % 7 + 1;
      if ((i + j) % 13 == 0 || (i + j) % 7 == 0 || (i + j) % 11 == 0) path[i][j] = 999;
    }
}

static void kernel_floyd_warshall(int n, int path[N][N]) {
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
}

int main(void) {
  int(*path)[N] = bench_alloc(sizeof(int[N][N]));
  BENCH(init(N, path), kernel_floyd_warshall(N, path), bench_digest(path, sizeof(int[N][N])));
  return 0;
}
