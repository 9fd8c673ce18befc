/* Unsupported: inline assembly (GNU C; compile with -std=gnu99).  blur_asm must be
 * skipped; scale_f32 is ordinary. */

void scale_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = 2.0f * src[i];
}

void blur_asm(const float *src, float *dst, int n)
{
    int i;

    for (i = 1; i < n - 1; i++) {
        __asm__ __volatile__("" : : : "memory");
        dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0f;
    }
}
