/* Sobel: Appendix A benchmark kernel of the C66x stencil dissertation, as written
 * (shared reference/c66x-stencil-compiler-and-edma.md, section 1.6).
 * float data, row stride size_x; border outputs are never written.  The literals are
 * double: keep them, they decide the rounding (bit-exactness).
 * Note: Prewitt-like weights (1,1,1); two outputs.
 */
void Sobel(float *input, int size_x, int size_y, float *output1, float *output2) {
  int i, j;
  for (i = 1; i < size_y - 1; ++i) {
    for (j = 1; j < size_x - 1; ++j) {
      float a = input[(i - 1) * size_x + j - 1];
      float b = input[(i - 1) * size_x + j];
      float c = input[(i - 1) * size_x + j + 1];
      float d = input[(i) * size_x + j - 1];
      float e = input[(i) * size_x + j + 1];
      float f = input[(i + 1) * size_x + j - 1];
      float g = input[(i + 1) * size_x + j];
      float h = input[(i + 1) * size_x + j + 1];
      output1[i * size_x + j] = (a + d + f - c - e - h) * 0.5;
      output2[i * size_x + j] = (a + b + c - f - g - h) * 0.5;
    }
  }
}
