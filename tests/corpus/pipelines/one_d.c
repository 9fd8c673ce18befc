/* A 1-D pipeline of three stencils on doubles (plain pointers). */
void one_d(int n, const double *in, double *a, double *b, double *out)
{
  for (int i = 1; i < n - 1; i++)
    a[i] = in[i - 1] + in[i] + in[i + 1];
  for (int i = 2; i < n - 2; i++)
    b[i] = a[i - 1] * a[i + 1];
  for (int i = 3; i < n - 3; i++)
    out[i] = b[i - 1] - b[i + 1] + a[i];
}
