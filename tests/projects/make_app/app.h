/* make_app: a small legacy-style program whose stencil kernels live in kernels.c. */
#ifndef MAKE_APP_H
#define MAKE_APP_H

#include <stddef.h>
#include <stdint.h>

/* kernels.c */
void jacobi2d(int n, int tsteps, double A[n][n], double B[n][n]);
void smooth3_f32(int n, const float *restrict in, float *restrict out);
void scale_matrix(int rows, int cols, float *a, float s);
void conv5_f32(int n, const float *in, float *out);
void soft_clip_f32(int n, const float *in, float *out, float limit);
void box3x3_s16_u8(int h, int w, const int16_t *src, uint8_t *dst, int shift);
double dot_f64(int n, const double *a, const double *b);

/* fallback.c */
int despeckle_goto(int n, const float *in, float *out, float threshold);

/* util.c */
void *xmalloc(size_t bytes);
void fill_bytes(void *p, size_t bytes, uint64_t *state);
void fill_f64(double *a, size_t n, uint64_t *state);
void fill_f32(float *a, size_t n, uint64_t *state);
uint64_t digest(const void *p, size_t bytes);
void print_f32_samples(const char *name, const float *a, size_t n);
void print_f64_samples(const char *name, const double *a, size_t n);

#endif
