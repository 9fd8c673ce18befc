/* MatrixAdd: Appendix A benchmark kernel of the C66x stencil dissertation, as written
 * (shared reference/c66x-stencil-compiler-and-edma.md, section 1.1).
 * float data, row stride size_x; border outputs are never written.  The literals are
 * double: keep them, they decide the rounding (bit-exactness). */
void MatrixAdd(float *input1, float *input2, int size_x, int size_y, float *output) {
  int i, j;
  for (i = 0; i < size_y; ++i) {
    for (j = 0; j < size_x; ++j) {
      output[i * size_x + j] = input1[i * size_x + j] + input2[i * size_x + j];
    }
  }
}
