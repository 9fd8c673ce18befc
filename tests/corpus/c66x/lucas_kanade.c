/* LucasKanade: Appendix A benchmark kernel of the C66x stencil dissertation, as written
 * (shared reference/c66x-stencil-compiler-and-edma.md, section 1.8).
 * float data, row stride size_x; border outputs are never written.  The literals are
 * double: keep them, they decide the rounding (bit-exactness).
 * Note: vy has the opposite sign of the textbook; det may be 0 (inf/NaN outputs).
 */
void LucasKanade(float *dx, float *dy, float *dt, int size_x, int size_y, float *vx, float *vy) {
  int i, j;
  for (i = 1; i < size_y - 1; ++i) {
    for (j = 1; j < size_x - 1; ++j) {
      float a1 = dx[(i - 1) * size_x + j - 1]; float b1 = dx[(i - 1) * size_x + j]; float c1 = dx[(i - 1) * size_x + j + 1];
      float d1 = dx[i * size_x + j - 1];       float e1 = dx[i * size_x + j];       float f1 = dx[i * size_x + j + 1];
      float g1 = dx[(i + 1) * size_x + j - 1]; float h1 = dx[(i + 1) * size_x + j]; float i1 = dx[(i + 1) * size_x + j + 1];
      float a2 = dy[(i - 1) * size_x + j - 1]; float b2 = dy[(i - 1) * size_x + j]; float c2 = dy[(i - 1) * size_x + j + 1];
      float d2 = dy[i * size_x + j - 1];       float e2 = dy[i * size_x + j];       float f2 = dy[i * size_x + j + 1];
      float g2 = dy[(i + 1) * size_x + j - 1]; float h2 = dy[(i + 1) * size_x + j]; float i2 = dy[(i + 1) * size_x + j + 1];
      float a3 = dt[(i - 1) * size_x + j - 1]; float b3 = dt[(i - 1) * size_x + j]; float c3 = dt[(i - 1) * size_x + j + 1];
      float d3 = dt[i * size_x + j - 1];       float e3 = dt[i * size_x + j];       float f3 = dt[i * size_x + j + 1];
      float g3 = dt[(i + 1) * size_x + j - 1]; float h3 = dt[(i + 1) * size_x + j]; float i3 = dt[(i + 1) * size_x + j + 1];
      float xx = a1*a1 + b1*b1 + c1*c1 + d1*d1 + e1*e1 + f1*f1 + g1*g1 + h1*h1 + i1*i1;
      float xy = a1*a2 + b1*b2 + c1*c2 + d1*d2 + e1*e2 + f1*f2 + g1*g2 + h1*h2 + i1*i2;
      float yy = a2*a2 + b2*b2 + c2*c2 + d2*d2 + e2*e2 + f2*f2 + g2*g2 + h2*h2 + i2*i2;
      float xt = a1*a3 + b1*b3 + c1*c3 + d1*d3 + e1*e3 + f1*f3 + g1*g3 + h1*h3 + i1*i3;
      float yt = a2*a3 + b2*b3 + c2*c3 + d2*d3 + e2*e3 + f2*f3 + g2*g3 + h2*h3 + i2*i3;
      float det = xx * yy - xy * xy;
      vx[i * size_x + j] = (-yy * xt + xy * yt) / det;
      vy[i * size_x + j] = ( xx * yt - xy * xt) / det;
    }
  }
}
