/* The defaults the AI Engine workloads share: T the element type (int16_t, int32_t, float),
 * ACC what C sums in, R the filter's rows (each workload adds its own sizes). */
#include <stdint.h>

#ifndef T
#define T int16_t
#endif
#ifndef ACC
#define ACC int
#endif
#ifndef R
#define R 3
#endif
