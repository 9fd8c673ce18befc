/* Unsupported: a call to an external function declared without a prototype (the types its
 * arguments are passed as are unknown).  blur_logged must be skipped; scale_f32 is ordinary. */

extern void log_pixel();

void scale_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = 2.0f * src[i];
}

void blur_logged(const float *src, float *dst, int n)
{
    int i;

    for (i = 1; i < n - 1; i++) {
        dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0f;
        log_pixel(i, dst[i]);
    }
}
