/* Unsupported: goto.  blur_goto must be skipped (compiled by cc); scale_f32 is ordinary. */

void scale_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = 2.0f * src[i];
}

int blur_goto(const float *src, float *dst, int n)
{
    int i;

    if (n < 3)
        goto fail;
    for (i = 1; i < n - 1; i++)
        dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0f;
    return 0;
fail:
    return -1;
}
