/* The output planes of Vyasa's Table VII and CONV3D: 128 x 2 (X x Y). */
#include "shapes.h"

#ifndef Y
#define Y 2
#endif
#ifndef X
#define X 128
#endif
