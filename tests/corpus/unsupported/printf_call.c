/* Unsupported: a call to an external function with side effects (printf).  blur_verbose
 * must be skipped; scale_f32 is ordinary. */
#include <stdio.h>

void scale_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = 2.0f * src[i];
}

void blur_verbose(const float *src, float *dst, int n)
{
    int i;

    for (i = 1; i < n - 1; i++) {
        dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0f;
        printf("dst[%d] = %f\n", i, dst[i]);
    }
}
