#ifndef STATIC_APP_FILTERS_H
#define STATIC_APP_FILTERS_H

void filter_a(int which, int n, const float *in, float *out);
void blur_a(int n, const float *in, float *out);
void blur_b(int n, const float *in, float *out);
void invert(int n, const float *in, float *out);

#endif
