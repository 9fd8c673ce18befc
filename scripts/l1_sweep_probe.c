/* How fast can one core run jacobi-2d's 5-point sweep when its rows stay in cache?
 * (issue 19: the speed a time tile's body could reach, measured rather than modelled.)
 *
 * A band of R rows x J columns of two arrays is swept many times, A -> B then B -> A, as
 * a diamond's points run inside the cache; then the same sweeps with two steps fused along
 * the rows (row i of B, then row i - 1 of A: the rows a step reads are in L1 when the next
 * step reads them). Both orders compute the same values; the program prints both rates.
 *
 *   gcc -O3 -march=native -ffp-contract=off scripts/l1_sweep_probe.c -o probe
 *   ./probe 34 128     # 68 KiB: about the L1
 *   ./probe 130 512    # 1 MiB: the L2
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sweep_row(int J, double (*restrict dst)[J], double (*restrict src)[J], int i)
{
    for (int j = 1; j < J - 1; j++)
        dst[i][j] = 0.2 * (src[i][j] + src[i][j - 1] + src[i][j + 1] + src[i + 1][j] + src[i - 1][j]);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    int R = argc > 1 ? atoi(argv[1]) : 130, J = argc > 2 ? atoi(argv[2]) : 512;
    long points = 200000000L;
    int steps = 2 * (int)(points / ((long)(R - 2) * (J - 2)) / 2 + 1);
    double (*A)[J] = malloc(sizeof(double[R][J])), (*B)[J] = malloc(sizeof(double[R][J]));
    double (*A2)[J] = malloc(sizeof(double[R][J])), (*B2)[J] = malloc(sizeof(double[R][J]));
    double best_plain = 1e30, best_fused = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        for (int i = 0; i < R; i++)
            for (int j = 0; j < J; j++)
                A[i][j] = B[i][j] = (i * 7 + j) % 13;
        memcpy(A2, A, sizeof(double[R][J]));
        memcpy(B2, B, sizeof(double[R][J]));
        double t0 = now();
        for (int t = 0; t < steps; t += 2) {
            for (int i = 1; i < R - 1; i++)
                sweep_row(J, B, A, i);
            for (int i = 1; i < R - 1; i++)
                sweep_row(J, A, B, i);
        }
        double t1 = now();
        for (int t = 0; t < steps; t += 2) {
            sweep_row(J, B2, A2, 1);
            for (int i = 2; i < R - 1; i++) {
                sweep_row(J, B2, A2, i);
                sweep_row(J, A2, B2, i - 1);
            }
            sweep_row(J, A2, B2, R - 2);
        }
        double t2 = now();
        best_plain = t1 - t0 < best_plain ? t1 - t0 : best_plain;
        best_fused = t2 - t1 < best_fused ? t2 - t1 : best_fused;
    }
    double swept = (double)steps * (R - 2) * (J - 2);
    printf("%d x %d (%ld KiB): step by step %.2f GSt/s, two steps fused %.2f GSt/s; same: %s\n",
           R, J, (long)sizeof(double[R][J]) * 2 / 1024, swept / best_plain * 1e-9,
           swept / best_fused * 1e-9, memcmp(A, A2, sizeof(double[R][J])) ? "no" : "yes");
    return 0;
}
