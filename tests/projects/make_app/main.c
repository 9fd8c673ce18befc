/* make_app driver: runs every kernel on deterministic data and prints digests and samples.
 * Usage: app [N]...   (each N is a problem size; default 37) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

struct grid {
    int n;
    double *a, *b;
};

struct image {
    int h, w;
    int16_t *src;
    uint8_t *dst;
};

struct result {
    const char *name;
    uint64_t digest;
};

static const char *const kernel_names[] = {
    "jacobi2d", "smooth3_f32", "scale_matrix", "conv5_f32",
    "soft_clip_f32", "box3x3_s16_u8", "dot_f64", "despeckle_goto",
};

static struct result results[16];
static int n_results;

static void record(const char *name, const void *p, size_t bytes)
{
    results[n_results].name = name;
    results[n_results].digest = digest(p, bytes);
    printf("%-16s %016llx\n", name, (unsigned long long)results[n_results].digest);
    n_results++;
}

static void run_size(int n)
{
    uint64_t state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    struct grid g;
    struct image img;
    size_t nn = (size_t)n * (size_t)n;
    float *x = xmalloc((size_t)n * sizeof *x), *y = xmalloc((size_t)n * sizeof *y);
    float *m = xmalloc(nn * sizeof *m);
    double *u = xmalloc((size_t)n * sizeof *u), *v = xmalloc((size_t)n * sizeof *v);
    double dot;
    int changed;

    printf("== n=%d\n", n);
    n_results = 0;

    g.n = n;
    g.a = xmalloc(nn * sizeof *g.a);
    g.b = xmalloc(nn * sizeof *g.b);
    fill_f64(g.a, nn, &state);
    memcpy(g.b, g.a, nn * sizeof *g.a);
    jacobi2d(g.n, 7, (double (*)[n])g.a, (double (*)[n])g.b);
    record("jacobi2d", g.a, nn * sizeof *g.a);
    print_f64_samples("A", g.a, nn);

    fill_f32(x, (size_t)n, &state);
    smooth3_f32(n, x, y);
    record("smooth3_f32", y, (size_t)n * sizeof *y);
    print_f32_samples("y", y, (size_t)n);

    fill_f32(m, nn, &state);
    scale_matrix(n, n, m, 1.75f);
    record("scale_matrix", m, nn * sizeof *m);
    print_f32_samples("m", m, nn);

    conv5_f32(n, x, y);
    record("conv5_f32", y, (size_t)n * sizeof *y);
    print_f32_samples("y", y, (size_t)n);

    soft_clip_f32(n, x, y, 0.75f);
    record("soft_clip_f32", y, (size_t)n * sizeof *y);
    print_f32_samples("y", y, (size_t)n);

    img.h = n;
    img.w = n + 2;
    img.src = xmalloc((size_t)img.h * (size_t)img.w * sizeof *img.src);
    img.dst = xmalloc((size_t)img.h * (size_t)img.w * sizeof *img.dst);
    fill_bytes(img.src, (size_t)img.h * (size_t)img.w * sizeof *img.src, &state);
    box3x3_s16_u8(img.h, img.w, img.src, img.dst, 9);
    record("box3x3_s16_u8", img.dst, (size_t)img.h * (size_t)img.w);
    printf("  dst[mid]=%u\n", img.dst[(size_t)(img.h / 2) * (size_t)img.w + (size_t)(img.w / 2)]);

    fill_f64(u, (size_t)n, &state);
    fill_f64(v, (size_t)n, &state);
    dot = dot_f64(n, u, v);
    record("dot_f64", &dot, sizeof dot);
    printf("  dot=%a\n", dot);

    fill_f32(x, (size_t)n, &state);
    for (int i = 0; i < n; i += 3)
        x[i] *= 8.0f;
    changed = despeckle_goto(n, x, y, 1.5f);
    record("despeckle_goto", y, (size_t)n * sizeof *y);
    printf("  changed=%d\n", changed);

    {
        uint64_t all = 0;
        for (int k = 0; k < n_results; k++) {
            if (strcmp(results[k].name, kernel_names[k]) != 0) {
                fprintf(stderr, "make_app: kernel order broken at %d\n", k);
                exit(3);
            }
            all = all * 31 + results[k].digest;
        }
        printf("all %016llx\n", (unsigned long long)all);
    }

    free(g.a);
    free(g.b);
    free(img.src);
    free(img.dst);
    free(x);
    free(y);
    free(m);
    free(u);
    free(v);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        run_size(37);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        int n = atoi(argv[i]);
        if (n < 1 || n > 4096) {
            fprintf(stderr, "make_app: bad size '%s'\n", argv[i]);
            return 1;
        }
        run_size(n);
    }
    return 0;
}
