/* Static kernels reached only through a table of function pointers (a dispatch table, as
 * legacy code has them), and a static kernel whose name filters_b.c uses too. */
#include "filters.h"

static void blur(int n, const float *in, float *out)
{
    for (int i = 1; i < n - 1; i++)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}

static void sharpen(int n, const float *in, float *out)
{
    for (int i = 1; i < n - 1; i++)
        out[i] = 2.0f * in[i] - 0.5f * (in[i - 1] + in[i + 1]);
}

static void (*const table[])(int, const float *, float *) = {blur, sharpen};

void filter_a(int which, int n, const float *in, float *out)
{
    table[which](n, in, out);
}

void blur_a(int n, const float *in, float *out)
{
    blur(n, in, out);
}
