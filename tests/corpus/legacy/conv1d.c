/* 1-D convolutions with a run-time tap array and a double accumulator. */

/* Horizontal: radius ntaps/2, the first and last radius outputs are not written. */
void conv1d_f32(const float *src, const float *taps, float *dst, int n, int ntaps)
{
    int i, k;
    int r = ntaps / 2;

    for (i = r; i < n - r; i++) {
        double acc = 0.0;
        for (k = 0; k < ntaps; k++)
            acc += (double)src[i - r + k] * taps[k];
        dst[i] = (float)acc;
    }
}

/* Vertical (column) convolution of a width x height image: the cache-hostile direction. */
void conv_col_f32(const float *src, const float *taps, float *dst, int width, int height, int ntaps)
{
    int x, y, k;
    int r = ntaps / 2;

    for (y = r; y < height - r; y++)
        for (x = 0; x < width; x++) {
            double acc = 0;
            for (k = -r; k <= r; k++)
                acc += src[(y + k) * width + x] * taps[k + r];
            dst[y * width + x] = (float)acc;
        }
}
