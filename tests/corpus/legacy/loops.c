/* Loop shapes seen in legacy code: a downward loop, a step-2 loop, a while loop, a do/while
 * loop, break/continue, and a pointer-walking loop with post-decrement/post-increment. */

/* Downward loop: dst is src reversed. */
void reverse_copy_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = n - 1; i >= 0; i--)
        dst[n - 1 - i] = src[i];
}

/* Step 2 in both directions: 2x2 average, dst is (height/2) x (width/2). */
void downsample2_u8(const unsigned char *src, unsigned char *dst, int width, int height)
{
    int x, y;
    int half_w = width / 2;

    for (y = 0; y + 1 < height; y += 2)
        for (x = 0; x + 1 < width; x += 2)
            dst[(y / 2) * half_w + x / 2] =
                (unsigned char)((src[y * width + x] + src[y * width + x + 1]
                                 + src[(y + 1) * width + x] + src[(y + 1) * width + x + 1] + 2) >> 2);
}

/* While loop: 1x3 mean of each row, float literals. */
void smooth_rows_while(const float *src, float *dst, int width, int height)
{
    int y = 0;

    while (y < height) {
        int x = 1;
        while (x < width - 1) {
            dst[y * width + x] = (src[y * width + x - 1] + src[y * width + x] + src[y * width + x + 1]) / 3.0f;
            x++;
        }
        y++;
    }
}

/* do/while with a guard: running sum of int16 values into int32 (no overflow for
 * n < 65536). */
void prefix_sum_dowhile(const short *in, int *out, int n)
{
    int i = 0;
    int acc = 0;

    if (n <= 0)
        return;
    do {
        acc += in[i];
        out[i] = acc;
    } while (++i < n);
}

/* break/continue: horizontal difference, a row stops at its first 0 pixel, pixels equal to
 * 255 are skipped (their output keeps its old value). */
void row_diff_until_zero_u8(const unsigned char *src, short *dst, int width, int height)
{
    int x, y;

    for (y = 0; y < height; y++) {
        for (x = 1; x < width - 1; x++) {
            unsigned char c = src[y * width + x];
            if (c == 0)
                break;
            if (c == 255)
                continue;
            dst[y * width + x] = (short)(src[y * width + x + 1] - src[y * width + x - 1]);
        }
    }
}

/* Pointer walking: while (n-- > 0) *dst++ = f(*src++). */
void halve_ptrwalk_u8(const unsigned char *src, unsigned char *dst, int n)
{
    while (n-- > 0)
        *dst++ = (unsigned char)(*src++ >> 1);
}
