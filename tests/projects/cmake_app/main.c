/* cmake_app: runs the kernels of the static library on deterministic data. Usage: app [N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencils.h"

static unsigned long long lcg = 12345;

static double rnd(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg >> 11) / 9007199254740992.0;
}

static unsigned long long fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c;
        memcpy(&c, b + i, 1);
        h = (h ^ c) * 0x100000001b3ULL;
    }
    return h;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 29;
    size_t nn = (size_t)n * (size_t)n;
    double *u = malloc((size_t)n * sizeof *u), *tmp = malloc((size_t)n * sizeof *tmp);
    float *img = malloc(nn * sizeof *img), *out = malloc(nn * sizeof *out);
    uint8_t *b = malloc(nn), *t = malloc(nn);

    for (int i = 0; i < n; i++)
        u[i] = tmp[i] = rnd();
    heat1d_f64(n, 25, u, tmp, 0.3);
    printf("heat1d %016llx u[n/2]=%a\n", fnv(u, (size_t)n * sizeof *u), u[n / 2]);

    for (size_t i = 0; i < nn; i++)
        img[i] = (float)rnd();
    blur3x3_f32(n, n, img, out);
    printf("blur3x3 %016llx out[mid]=%a\n", fnv(out, nn * sizeof *out), (double)out[nn / 2]);

    for (size_t i = 0; i < nn; i++)
        b[i] = (uint8_t)(rnd() * 256.0);
    threshold_u8((int)nn, b, t, 40, 200);
    printf("threshold %016llx\n", fnv(t, nn));

    printf("sum_sq %a\n", (double)sum_sq_f32((int)nn, out));
    free(u);
    free(tmp);
    free(img);
    free(out);
    free(b);
    free(t);
    return 0;
}
