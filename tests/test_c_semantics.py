"""C semantics the front end must get exactly right, each proven by `check` against `cc`.

Every snippet here once miscompiled, crashed the front end or was refused; each is run at
-O3 and -O0 with odd sizes, and must be bit-exact.
"""

from __future__ import annotations

import textwrap
import time

import pytest
from pycc_stencil.frontend import lower_file
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


def _long_branch_chain() -> str:
    """A 3x3 median filter written as a sorting network of `do { if } while (0)` swaps on
    scalar locals, repeated, then a chain of clamping `?:`: 400 branches in one loop body."""
    network = [(1, 2), (4, 5), (7, 8), (0, 1), (3, 4), (6, 7), (1, 2), (4, 5), (7, 8), (0, 3)]
    network += [(5, 8), (4, 7), (3, 6), (1, 4), (2, 5), (4, 7), (4, 2), (6, 4), (4, 2)]
    swaps = [f"SWAP(p{a}, p{b});" for _ in range(10) for a, b in network]
    clamps = [f"v = v > lo + {k % 7}.0f ? v - hi : v + hi;" for k in range(400 - len(swaps))]
    loads = [f"float p{i} = in[(y + {i // 3 - 1}) * w + x + {i % 3 - 1}];" for i in range(9)]
    body = "\n".join(loads + swaps + ["float v = p4;"] + clamps + ["out[y * w + x] = v;"])
    return f"""
        #define SWAP(a, b) do {{ if (a > b) {{ float t = a; a = b; b = t; }} }} while (0)
        void median_chain(int w, int h, const float *in, float *out, float lo, float hi) {{
          for (int y = 1; y < h - 1; y++)
            for (int x = 1; x < w - 1; x++) {{
              {body}
            }}
        }}
        """


@pytest.mark.sweep  # a scaling guard (8 s): the sweep (docs/testing.md)
def test_long_branch_chain_lowers_in_linear_time(tmp_path):
    """The front end's SSA construction once took time quadratic in the number of branches in
    a loop body (about 20 s for 76 swaps) and recursed once per branch, so a few hundred of
    them were an internal error."""
    path = tmp_path / "chain.c"
    path.write_text(_long_branch_chain())
    seconds: list[float] = []

    def timed_lower(source: str, cflags: list[str]):
        start = time.perf_counter()
        lowered = lower_file(source, cflags)
        seconds.append(time.perf_counter() - start)
        return lowered

    options = CheckOptions(params={"w": "23", "h": "17", "lo": "0.25", "hi": "0.125"})
    results = check_file(path, ["-std=gnu99"], options, lower=timed_lower)
    assert results and all(r.status == "OK" for r in results), "\n".join(map(str, results))
    # quadratic took 20 s; linear takes about 1 s alone (8 s: a loaded 2-core CI machine)
    assert seconds and max(seconds) < 8.0, f"lowering took {max(seconds):.1f} s"
