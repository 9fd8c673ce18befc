/* GaussianX7: Appendix A benchmark kernel of the C66x stencil dissertation, as written
 * (shared reference/c66x-stencil-compiler-and-edma.md, section 1.5).
 * float data, row stride size_x; border outputs are never written.  The literals are
 * double: keep them, they decide the rounding (bit-exactness).
 * Note: weight 0.062 at j-2 (Eq. 2.1 says 0.061) is kept; the sum is evaluated in double and
 * narrowed once; i starts at 3 although the stencil has no vertical halo.
 */
void GaussianX7(float *input, int size_x, int size_y, float *restrict output) {
  int i, j;
  for (i = 3; i < size_y - 3; ++i) {
    for (j = 3; j < size_x - 3; ++j) {
      float v =
        input[(i) * size_x + (j - 3)] * 0.006 +
        input[(i) * size_x + (j - 2)] * 0.062 +
        input[(i) * size_x + (j - 1)] * 0.242 +
        input[(i) * size_x + (j)]     * 0.383 +
        input[(i) * size_x + (j + 1)] * 0.242 +
        input[(i) * size_x + (j + 2)] * 0.061 +
        input[(i) * size_x + (j + 3)] * 0.006;
      output[i * size_x + j] = v;
    }
  }
}
