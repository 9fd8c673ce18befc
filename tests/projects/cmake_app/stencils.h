#ifndef CMAKE_APP_STENCILS_H
#define CMAKE_APP_STENCILS_H

#include <stdint.h>

void heat1d_f64(int n, int steps, double *restrict u, double *restrict tmp, double alpha);
void blur3x3_f32(int h, int w, const float *in, float *out);
void threshold_u8(int n, const uint8_t *in, uint8_t *out, int lo, int hi);
float sum_sq_f32(int n, const float *a);

#endif
