/* Median filters with a local fixed-size window array. */

/* Horizontal median of 3: the window is sorted with three compare-and-swaps. */
void median3_h_u8(const unsigned char *src, unsigned char *dst, int width, int height)
{
    int x, y;
    unsigned char w[3], t;

    for (y = 0; y < height; y++)
        for (x = 1; x < width - 1; x++) {
            w[0] = src[y * width + x - 1];
            w[1] = src[y * width + x];
            w[2] = src[y * width + x + 1];
            if (w[0] > w[1]) { t = w[0]; w[0] = w[1]; w[1] = t; }
            if (w[1] > w[2]) { t = w[1]; w[1] = w[2]; w[2] = t; }
            if (w[0] > w[1]) { t = w[0]; w[0] = w[1]; w[1] = t; }
            dst[y * width + x] = w[1];
        }
}

/* 3x3 median: gather the window into int win[9], insertion sort, take win[4]. */
void median3x3_u8(const unsigned char *src, unsigned char *dst, int width, int height)
{
    int x, y, u, v, k, m;
    int win[9];

    for (y = 1; y < height - 1; y++) {
        for (x = 1; x < width - 1; x++) {
            k = 0;
            for (v = -1; v <= 1; v++)
                for (u = -1; u <= 1; u++)
                    win[k++] = src[(y + v) * width + (x + u)];
            for (k = 1; k < 9; k++) {
                int key = win[k];
                m = k - 1;
                while (m >= 0 && win[m] > key) {
                    win[m + 1] = win[m];
                    m--;
                }
                win[m + 1] = key;
            }
            dst[y * width + x] = (unsigned char)win[4];
        }
    }
}
