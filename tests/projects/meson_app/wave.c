/* A 1-D wave equation leapfrog and a 2-D 5-point Laplacian: the kernels of meson_app. */
#include <math.h>

void wave1d(int n, int steps, double c2, double *restrict prev, double *restrict cur,
            double *restrict next)
{
    for (int s = 0; s < steps; s++) {
        for (int i = 1; i < n - 1; i++)
            next[i] = 2.0 * cur[i] - prev[i] + c2 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
        for (int i = 1; i < n - 1; i++) {
            prev[i] = cur[i];
            cur[i] = next[i];
        }
    }
}

void laplace2d(int h, int w, const float in[h][w], float out[h][w])
{
    for (int y = 1; y < h - 1; y++)
        for (int x = 1; x < w - 1; x++)
            out[y][x] = fabsf(in[y - 1][x] + in[y + 1][x] + in[y][x - 1] + in[y][x + 1]
                              - 4.0f * in[y][x]);
}
