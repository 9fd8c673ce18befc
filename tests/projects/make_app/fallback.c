/* A loop kernel pycc-stencil cannot compile (a goto leaves the loop nest): compiler mode
 * must hand it to cc with one -Wpycc-fallback warning, and the program must still work. */
#include "app.h"

int despeckle_goto(int n, const float *in, float *out, float threshold)
{
    int i, changed = 0;

    for (i = 0; i < n; i++) {
        float left, right;

        if (i == 0 || i == n - 1)
            goto copy;
        left = in[i - 1];
        right = in[i + 1];
        if (in[i] - left > threshold && in[i] - right > threshold) {
            out[i] = 0.5f * (left + right);
            changed++;
            continue;
        }
    copy:
        out[i] = in[i];
    }
    return changed;
}
