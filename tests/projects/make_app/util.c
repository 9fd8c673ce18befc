/* Non-kernel helpers of make_app: allocation, deterministic data, digests, printing.
 * Every loop here calls memcpy or printf: calls into the C library, which nothing here
 * improves (taken over only under PYCC_TAKEOVER=all). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);

    if (!p) {
        fprintf(stderr, "make_app: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

static uint64_t next(uint64_t *state)
{
    /* 64-bit LCG (Knuth's MMIX constants) */
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state;
}

void fill_bytes(void *p, size_t bytes, uint64_t *state)
{
    unsigned char *out = p;
    size_t done;

    for (done = 0; done < bytes; done += 8) {
        uint64_t x = next(state);
        size_t chunk = bytes - done < 8 ? bytes - done : 8;
        memcpy(out + done, &x, chunk);
    }
}

/* Doubles in [1, 2) built from random mantissa bits. */
void fill_f64(double *a, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = 0x3FF0000000000000ULL | (next(state) >> 12);
        memcpy(&a[i], &bits, sizeof bits);
    }
}

/* Floats in [1, 2). */
void fill_f32(float *a, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = 0x3F800000u | (uint32_t)(next(state) >> 41);
        memcpy(&a[i], &bits, sizeof bits);
    }
}

/* FNV-1a over the bytes, 8 at a time. */
uint64_t digest(const void *p, size_t bytes)
{
    const unsigned char *in = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t done;

    for (done = 0; done < bytes; done += 8) {
        uint64_t x = 0;
        size_t chunk = bytes - done < 8 ? bytes - done : 8;
        memcpy(&x, in + done, chunk);
        h = (h ^ x) * 0x100000001b3ULL;
    }
    return h;
}

/* First, middle and last elements as hex floats, so any bit difference shows. */
void print_f32_samples(const char *name, const float *a, size_t n)
{
    size_t idx[3] = {0, n / 2, n ? n - 1 : 0};

    printf("  %s:", name);
    for (int k = 0; k < 3 && n; k++)
        printf(" [%zu]=%a", idx[k], (double)a[idx[k]]);
    printf("\n");
}

void print_f64_samples(const char *name, const double *a, size_t n)
{
    size_t idx[3] = {0, n / 2, n ? n - 1 : 0};

    printf("  %s:", name);
    for (int k = 0; k < 3 && n; k++)
        printf(" [%zu]=%a", idx[k], a[idx[k]]);
    printf("\n");
}
