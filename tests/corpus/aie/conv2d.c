/* A CONV2D as C users write it (Vyasa's Table VI: image filters), for the AI Engine back end
 * (issue 17). Shapes by -D: T the element (int16_t, int32_t, float) and ACC what C sums in,
 * R x S the filter, Y x X the outputs (rows x columns). Input rows hold ROW elements: room
 * for the last column's window, rounded up to 128 bits (the AIE loads aligned vectors). */
#include "shapes.h"

#ifndef S
#define S 3
#endif
#ifndef Y
#define Y 16
#endif
#ifndef X
#define X 256
#endif
#define ROW ((X + S + 7) / 8 * 8)

void conv2d(const T in[Y + R - 1][ROW], const T w[R][S], T out[Y][X]) {
  for (int y = 0; y < Y; y++)
    for (int x = 0; x < X; x++) {
      ACC sum = 0;
      for (int i = 0; i < R; i++)
        for (int j = 0; j < S; j++)
          sum += w[i][j] * in[y + i][x + j];
      out[y][x] = sum;
    }
}
