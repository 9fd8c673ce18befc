/* Stencil kernels of make_app: the functions pycc-stencil compiles in compiler mode. */
#include <stdint.h>

#include "app.h"

/* Weights of smooth3_f32; -DSMOOTH_CENTER=... changes the result. */
#ifndef SMOOTH_CENTER
#define SMOOTH_CENTER 0.5f
#endif
#ifndef SMOOTH_SIDE
#define SMOOTH_SIDE 0.25f
#endif

/* Coefficients of conv5_f32: a file-scope constant table. */
static const float conv5_coef[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

/* 2-D Jacobi sweep on C99 VLA parameters, PolyBench style. */
void jacobi2d(int n, int tsteps, double A[n][n], double B[n][n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
    }
}

/* 1-D 3-point float kernel on restrict pointers; the borders are copied. */
void smooth3_f32(int n, const float *restrict in, float *restrict out)
{
    int i;

    if (n <= 0)
        return;
    out[0] = in[0];
    for (i = 1; i < n - 1; i++)
        out[i] = SMOOTH_SIDE * in[i - 1] + SMOOTH_CENTER * in[i] + SMOOTH_SIDE * in[i + 1];
    out[n - 1] = in[n - 1];
}

/* A static kernel, only reachable through the non-static wrapper below. */
static void scale_rows(int rows, int cols, float *a, float s)
{
    for (int r = 0; r < rows; r++) {
        float f = s * (float)(r + 1) * 0.33;   /* float * double: promoted, then narrowed */
        for (int c = 0; c < cols; c++)
            a[r * cols + c] = a[r * cols + c] * f + (float)c;
    }
}

void scale_matrix(int rows, int cols, float *a, float s)
{
    scale_rows(rows, cols, a, s);
    scale_rows(rows, cols, a, -0.5f * s);
}

/* 5-point convolution with a file-scope static const coefficient table. */
void conv5_f32(int n, const float *in, float *out)
{
    for (int i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int k = -2; k <= 2; k++) {
            int j = i + k;
            if (j < 0)
                j = 0;
            if (j > n - 1)
                j = n - 1;
            acc += conv5_coef[k + 2] * in[j];
        }
        out[i] = acc;
    }
}

/* A static inline helper called from a kernel. */
static inline float clampf(float x, float lo, float hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

void soft_clip_f32(int n, const float *in, float *out, float limit)
{
    for (int i = 0; i < n; i++) {
        float v = in[i] * 3.0f - 4.5f;
        out[i] = clampf(v, -limit, limit) + 0.125f * v;
    }
}

/* int16 -> uint8 image filter: 3x3 box sum accumulated in int, shifted, offset, clamped.
 * Border pixels are set to 0. */
void box3x3_s16_u8(int h, int w, const int16_t *src, uint8_t *dst, int shift)
{
    int x, y;

    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            int sum, dy, dx, v;

            if (y == 0 || x == 0 || y == h - 1 || x == w - 1) {
                dst[y * w + x] = 0;
                continue;
            }
            sum = 0;
            for (dy = -1; dy <= 1; dy++)
                for (dx = -1; dx <= 1; dx++)
                    sum += src[(y + dy) * w + (x + dx)] * (dx == 0 && dy == 0 ? 4 : 1);
            v = (sum >> shift) + 128;
            if (v < 0)
                v = 0;
            else if (v > 255)
                v = 255;
            dst[y * w + x] = (uint8_t)v;
        }
    }
}

/* A reduction returning a value: sequential order, so no reassociation is allowed. */
double dot_f64(int n, const double *a, const double *b)
{
    double s = 0.0;

    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}
