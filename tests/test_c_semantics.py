"""C semantics the front end must get exactly right, each proven by `check` against `cc`.

Every snippet here once miscompiled, crashed the front end or was refused; each is run at
-O3 and -O0 with odd sizes, and must be bit-exact.
"""

from __future__ import annotations

import textwrap

import pytest
from pycc_stencil.runtime.check import CheckOptions, check_file

SNIPPETS = {
    "switch whose body is a bare case label": """
        void sw(int *b, int n) {
          for (int i = 0; i < n; i++)
            switch (i)
              case 1: b[i] = 2;
        }
        void sw_default(int *b, int n) {
          for (int i = 0; i < n; i++) switch (b[i] & 3) default: b[i] += 3;
        }
        """,
    "switch with fallthrough, continue and default in the middle": """
        void k(int n, int *a) {
          for (int i = 0; i < n; i++)
            switch (a[i] & 7) {
              case 0: a[i] = 1; break;
              case 1: a[i] = 5;
              case 2: case 3: a[i]++; continue;
              default: a[i] = -(a[i] >> 4);
              case 7: a[i] ^= 3;
            }
        }
        """,
    "K&R definitions receive promoted arguments": """
        void kr_char(y, n, c, s, f)
            int *y; int n; char c; unsigned short s; float f;
        {
            int i;
            for (i = 0; i < n; i++)
                y[i] += c * s + (int)(f * 4);
        }
        """,
    "libm calls are not rewritten (pow, fmin signed zeros)": """
        #include <math.h>
        void p(const double *a, double *b, int n) {
          for (int i = 0; i < n; i++) b[i] = pow(a[i], 2.0) + pow(2.0, a[i]) + pow(a[i], -1.0);
        }
        void z(const float *a, float *b, int n) {
          for (int i = 0; i < n; i++) {
            float s = a[i] > 1.0f ? 0.0f : -0.0f;
            b[i] = fminf(s, -s) + fmaxf(0.0f, (a[i] - 1.0f) * -0.0f);
          }
        }
        """,
    "classification macros, INFINITY and NAN": """
        #include <math.h>
        void cls(int n, const float *a, int *o) {
          for (int i = 0; i < n; i++) {
            float x = a[i] > 1.9f ? INFINITY : a[i] > 1.8f ? -INFINITY : a[i] < 0.6f ? NAN
                    : a[i] < 0.7f ? 0.0f : a[i] < 0.75f ? 1e-40f : a[i];
            o[i] = isinf(x) + 10 * isfinite(x) + 100 * isnormal(x) + 1000 * fpclassify(x)
                 + 10000 * (signbit(x) != 0) + 100000 * isgreater(x, 1.0f) + (isnan(x) << 20);
          }
        }
        """,
    "pointer-to-array parameters and sizeof of a VLA": """
        void rows(int n, int m, float (*A)[m], const float *s) {
          for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++) A[i][j] *= s[i];
        }
        void walk(int n, int m, float A[n][m]) {
          float (*row)[m] = A;
          for (int i = 0; i < n; i++, row++) (*row)[0] = (*row)[1] + sizeof(*row) + sizeof A[i];
        }
        """,
    "integer promotions, shifts, division and modulo of negatives": """
        #include <stdint.h>
        void ints(int n, uint8_t *u, int16_t *s, int *x, unsigned *w, long long *l) {
          for (int i = 0; i < n; i++) {
            u[i] = (uint8_t)((u[i] * 77 + u[i] * 150 + 29) >> 8);
            s[i] = (int16_t)(s[i] * 3);
            x[i] = (x[i] >> 3) / -7 + (x[i] % 5) - (-x[i] % 3) + (x[i] & (x[i] - 1));
            w[i] = w[i] * 2654435761u + (w[i] >> 5) + (w[i] < (unsigned)x[i]);
            l[i] = l[i] / 3 + (long long)x[i] * 1000003LL;
          }
        }
        """,
}

#: scalar parameters besides n = 37
EXTRA_PARAMS = {
    "K&R definitions receive promoted arguments": {"c": "-5", "s": "7", "f": "1.5"},
    "pointer-to-array parameters and sizeof of a VLA": {"m": "11"},
}


@pytest.mark.parametrize("opt", [3, 0])
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_bit_exact(tmp_path, name, opt):
    path = tmp_path / "snippet.c"
    path.write_text(textwrap.dedent(SNIPPETS[name]))
    params = {"n": "37", **EXTRA_PARAMS.get(name, {})}
    options = CheckOptions(params=params, opt_level=opt)
    results = check_file(path, ["-std=gnu99"], options)
    assert results and all(r.status == "OK" for r in results), "\n".join(map(str, results))
