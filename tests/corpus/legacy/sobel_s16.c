/* Sobel on 16-bit signed images (e.g. the output of a previous filter), written in two old
 * styles.  Sums stay within int for every int16 input: |gx|, |gy| <= 4 * 65535. */

/* |gx| + |gy| scaled by 1/8, saturated to [0, 255] with if/else. */
void sobel_mag_s16(const short *in, unsigned char *out, int width, int height)
{
    int x, y;
    int gx, gy, mag;

    for (y = 1; y < height - 1; y++) {
        const short *r0 = in + (y - 1) * width;
        const short *r1 = in + y * width;
        const short *r2 = in + (y + 1) * width;
        for (x = 1; x < width - 1; x++) {
            gx = (r0[x + 1] + 2 * r1[x + 1] + r2[x + 1]) - (r0[x - 1] + 2 * r1[x - 1] + r2[x - 1]);
            gy = (r2[x - 1] + 2 * r2[x] + r2[x + 1]) - (r0[x - 1] + 2 * r0[x] + r0[x + 1]);
            if (gx < 0)
                gx = -gx;
            if (gy < 0)
                gy = -gy;
            mag = (gx + gy) >> 3;
            if (mag > 255)
                out[y * width + x] = 255;
            else
                out[y * width + x] = (unsigned char)mag;
        }
    }
}

/* Signed gx + gy divided by 4 (C division truncates toward zero, also for negative sums),
 * saturated to [0, 255] with nested ternaries; int16 output. */
void sobel_sum_s16_sat(const short *in, short *out, int width, int height)
{
    int x, y;

    for (y = 1; y < height - 1; y++) {
        for (x = 1; x < width - 1; x++) {
            int gx = -in[(y - 1) * width + x - 1] + in[(y - 1) * width + x + 1]
                     - 2 * in[y * width + x - 1] + 2 * in[y * width + x + 1]
                     - in[(y + 1) * width + x - 1] + in[(y + 1) * width + x + 1];
            int gy = -in[(y - 1) * width + x - 1] - 2 * in[(y - 1) * width + x] - in[(y - 1) * width + x + 1]
                     + in[(y + 1) * width + x - 1] + 2 * in[(y + 1) * width + x] + in[(y + 1) * width + x + 1];
            int v = (gx + gy) / 4;
            out[y * width + x] = (short)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}
