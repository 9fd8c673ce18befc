/* CONV2D layers as C users write them (Vyasa's Table VII, here with the x loop vectorized):
 * K output channels, C input channels (T, ACC, R, S, Y, X as in conv2d.c). `conv2d_layer`
 * is a dense layer (REG; PW with R = S = 1; SS with R or S = 1), `conv2d_depthwise` one with
 * one input channel per output channel (DS). */
#include "layer_shapes.h"

#ifndef S
#define S 3
#endif
#ifndef C
#define C 8
#endif
#ifndef K
#define K 16
#endif
#define ROW ((X + S + 7) / 8 * 8)

void conv2d_layer(const T in[C][Y + R - 1][ROW], const T w[K][C][R][S], T out[K][Y][X]) {
  for (int k = 0; k < K; k++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) {
        ACC sum = 0;
        for (int c = 0; c < C; c++)
          for (int i = 0; i < R; i++)
            for (int j = 0; j < S; j++)
              sum += w[k][c][i][j] * in[c][y + i][x + j];
        out[k][y][x] = sum;
      }
}

void conv2d_depthwise(const T in[K][Y + R - 1][ROW], const T w[K][R][S], T out[K][Y][X]) {
  for (int k = 0; k < K; k++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) {
        ACC sum = 0;
        for (int i = 0; i < R; i++)
          for (int j = 0; j < S; j++)
            sum += w[k][i][j] * in[k][y + i][x + j];
        out[k][y][x] = sum;
      }
}

/* FC: one pixel, K outputs of C inputs each; its only loop after the reduction is over output
 * channels, along which the weights move C elements at a time */
void fully_connected(const T in[C], const T w[K][C], T out[K]) {
  for (int k = 0; k < K; k++) {
    ACC sum = 0;
    for (int c = 0; c < C; c++)
      sum += w[k][c] * in[c];
    out[k] = sum;
  }
}
