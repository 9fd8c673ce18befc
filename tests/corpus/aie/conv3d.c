/* A CONV3D (Vyasa's §V CONV3D: R x R x R filters over a volume), x vectorized: T, ACC as in
 * conv2d.c, Z x Y x X outputs. Input rows of ROW elements, as in conv2d.c. */
#include "layer_shapes.h"

#ifndef Z
#define Z 16
#endif
#define ROW ((X + R + 7) / 8 * 8)

void conv3d(const T in[Z + R - 1][Y + R - 1][ROW], const T w[R][R][R], T out[Z][Y][X]) {
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) {
        ACC sum = 0;
        for (int a = 0; a < R; a++)
          for (int b = 0; b < R; b++)
            for (int c = 0; c < R; c++)
              sum += w[a][b][c] * in[z + a][y + b][x + c];
        out[z][y][x] = sum;
      }
}
