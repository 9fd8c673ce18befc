/* meson_app: runs wave1d and laplace2d on deterministic data and prints hex floats. */
#include <stdio.h>
#include <stdlib.h>

void wave1d(int n, int steps, double c2, double *restrict prev, double *restrict cur,
            double *restrict next);
void laplace2d(int h, int w, const float in[h][w], float out[h][w]);

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 41;
    double *p = calloc((size_t)n, sizeof *p), *c = calloc((size_t)n, sizeof *c);
    double *x = calloc((size_t)n, sizeof *x);
    float *in = calloc((size_t)n * (size_t)n, sizeof *in), *out = calloc((size_t)n * (size_t)n, sizeof *out);
    double s = 0.0;
    float t = 0.0f;

    for (int i = 0; i < n; i++)
        p[i] = c[i] = (i * 7 % 13) / 13.0;
    wave1d(n, 30, 0.21, p, c, x);
    for (int i = 0; i < n; i++)
        s += c[i] * (i + 1);
    printf("wave1d %a %a\n", s, c[n / 2]);

    for (int i = 0; i < n * n; i++)
        in[i] = (float)((i * 37 % 101) / 17.0);
    laplace2d(n, n, (const float (*)[n])in, (float (*)[n])out);
    for (int i = 0; i < n * n; i++)
        t += out[i] * (float)(i % 5);
    printf("laplace2d %a %a\n", (double)t, (double)out[(n / 2) * n + n / 2]);
    free(p);
    free(c);
    free(x);
    free(in);
    free(out);
    return 0;
}
