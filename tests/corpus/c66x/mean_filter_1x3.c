/* MeanFilter1x3: Appendix A benchmark kernel of the C66x stencil dissertation, as written
 * (shared reference/c66x-stencil-compiler-and-edma.md, section 1.2).
 * float data, row stride size_x; border outputs are never written.  The literals are
 * double: keep them, they decide the rounding (bit-exactness).
 * Note: i covers ALL rows (no vertical margin).
 */
void MeanFilter1x3(float *input, int size_x, int size_y, float *output) {
  int i, j;
  for (i = 0; i < size_y; ++i) {
    for (j = 1; j < size_x - 1; ++j) {
      float v = input[(i) * size_x + (j - 1)] +
                input[(i) * size_x + (j)] +
                input[(i) * size_x + (j + 1)];
      output[i * size_x + j] = v * 0.33;
    }
  }
}
