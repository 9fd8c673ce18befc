/* Unsupported: setjmp/longjmp.  checked_blur must be skipped; scale_f32 is ordinary. */
#include <setjmp.h>

static jmp_buf on_error;

void scale_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = 2.0f * src[i];
}

int checked_blur(const float *src, float *dst, int n)
{
    int i;

    if (setjmp(on_error))
        return -1;
    for (i = 1; i < n - 1; i++) {
        if (src[i] != src[i])
            longjmp(on_error, 1);
        dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0f;
    }
    return 0;
}
