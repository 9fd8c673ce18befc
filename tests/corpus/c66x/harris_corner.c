/* HarrisCorner: Appendix A benchmark kernel of the C66x stencil dissertation, as written
 * (shared reference/c66x-stencil-compiler-and-edma.md, section 1.7).
 * float data, row stride size_x; border outputs are never written.  The literals are
 * double: keep them, they decide the rounding (bit-exactness).
 * Note: 0.11 * xy is a double multiply; a local named i1 sits next to loop variable i.
 */
void HarrisCorner(float *dx, float *dy, int size_x, int size_y, float *s) {
  int i, j;
  for (i = 1; i < size_y - 1; ++i) {
    for (j = 1; j < size_x - 1; ++j) {
      float a1 = dx[(i - 1) * size_x + j - 1];
      float b1 = dx[(i - 1) * size_x + j];
      float c1 = dx[(i - 1) * size_x + j + 1];
      float d1 = dx[i * size_x + j - 1];
      float e1 = dx[i * size_x + j];
      float f1 = dx[i * size_x + j + 1];
      float g1 = dx[(i + 1) * size_x + j - 1];
      float h1 = dx[(i + 1) * size_x + j];
      float i1 = dx[(i + 1) * size_x + j + 1];
      float a2 = dy[(i - 1) * size_x + j - 1];
      float b2 = dy[(i - 1) * size_x + j];
      float c2 = dy[(i - 1) * size_x + j + 1];
      float d2 = dy[i * size_x + j - 1];
      float e2 = dy[i * size_x + j];
      float f2 = dy[i * size_x + j + 1];
      float g2 = dy[(i + 1) * size_x + j - 1];
      float h2 = dy[(i + 1) * size_x + j];
      float i2 = dy[(i + 1) * size_x + j + 1];
      float xx = a1 * a1 + b1 * b1 + c1 * c1 + d1 * d1 +
                 e1 * e1 + f1 * f1 + g1 * g1 + h1 * h1 + i1 * i1;
      float xy = a1 * a2 + b1 * b2 + c1 * c2 + d1 * d2 +
                 e1 * e2 + f1 * f2 + g1 * g2 + h1 * h2 + i1 * i2;
      float yy = a2 * a2 + b2 * b2 + c2 * c2 + d2 * d2 +
                 e2 * e2 + f2 * f2 + g2 * g2 + h2 * h2 + i2 * i2;
      s[i * size_x + j] = xx + yy - 0.11 * xy;
    }
  }
}
