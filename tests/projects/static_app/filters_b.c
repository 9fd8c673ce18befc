/* A second translation unit with its own static `blur` (a different one). */
#include "filters.h"

static void blur(int n, const float *in, float *out)
{
    for (int i = 2; i < n - 2; i++)
        out[i] = (in[i - 2] + in[i - 1] + in[i] + in[i + 1] + in[i + 2]) / 5.0f;
}

/* A non-static kernel whose address main.c stores. */
void invert(int n, const float *in, float *out)
{
    for (int i = 0; i < n; i++)
        out[i] = 1.0f / in[i];
}

void blur_b(int n, const float *in, float *out)
{
    blur(n, in, out);
}
