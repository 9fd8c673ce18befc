/* pbmini.h -- a tiny PolyBench-like macro layer for the compiler-mode tests (not PolyBench's
 * header).  Kernels are written exactly like PolyBench/C 4 benchmarks against it.
 *
 *   -DPOLYBENCH_USE_C99_PROTO   array parameters take the run-time sizes (VLAs)
 *   -DDATA_TYPE_IS_FLOAT        float elements (default double)
 *   -DPOLYBENCH_STACK_ARRAYS    arrays on the stack instead of the heap
 *
 * Arrays are dumped to stdout as hex floats, so every bit of every element is compared. */
#ifndef PBMINI_H
#define PBMINI_H

#include <stdio.h>
#include <stdlib.h>

#ifdef POLYBENCH_USE_C99_PROTO
#define PB_SELECT_(static_size, run_time_size) run_time_size
#else
#define PB_SELECT_(static_size, run_time_size) static_size
#endif
#define PB_DIM_(s, d) [PB_SELECT_(s, d)]

#define POLYBENCH_1D(var, d1, dd1) var PB_DIM_(d1, dd1)
#define POLYBENCH_2D(var, d1, d2, dd1, dd2) var PB_DIM_(d1, dd1) PB_DIM_(d2, dd2)
#define POLYBENCH_3D(var, d1, d2, d3, dd1, dd2, dd3) \
  var PB_DIM_(d1, dd1) PB_DIM_(d2, dd2) PB_DIM_(d3, dd3)

#ifdef POLYBENCH_STACK_ARRAYS
#define POLYBENCH_1D_ARRAY_DECL(var, type, d1, dd1) type POLYBENCH_1D(var, d1, dd1)
#define POLYBENCH_2D_ARRAY_DECL(var, type, d1, d2, dd1, dd2) type POLYBENCH_2D(var, d1, d2, dd1, dd2)
#define POLYBENCH_3D_ARRAY_DECL(var, type, d1, d2, d3, dd1, dd2, dd3) \
  type POLYBENCH_3D(var, d1, d2, d3, dd1, dd2, dd3)
#define POLYBENCH_ARRAY(x) x
#define POLYBENCH_FREE_ARRAY(x) ((void)0)
#else
#define POLYBENCH_1D_ARRAY_DECL(var, type, d1, dd1) \
  type POLYBENCH_1D((*var), d1, dd1) = malloc(sizeof(type) * (size_t)(d1))
#define POLYBENCH_2D_ARRAY_DECL(var, type, d1, d2, dd1, dd2) \
  type POLYBENCH_2D((*var), d1, d2, dd1, dd2) = malloc(sizeof(type) * (size_t)(d1) * (size_t)(d2))
#define POLYBENCH_3D_ARRAY_DECL(var, type, d1, d2, d3, dd1, dd2, dd3) \
  type POLYBENCH_3D((*var), d1, d2, d3, dd1, dd2, dd3) = \
    malloc(sizeof(type) * (size_t)(d1) * (size_t)(d2) * (size_t)(d3))
#define POLYBENCH_ARRAY(x) (*(x))
#define POLYBENCH_FREE_ARRAY(x) free((void *)(x))
#endif

#ifdef DATA_TYPE_IS_FLOAT
#define DATA_TYPE float
#define SCALAR_VAL(x) x##f
#else
#define DATA_TYPE double
#define SCALAR_VAL(x) x
#endif

#define polybench_start_instruments
#define polybench_stop_instruments
#define polybench_print_instruments

/* Dumps: one line per row, hex floats. */
#define POLYBENCH_DUMP_BEGIN(name) printf("begin dump: %s\n", name)
#define POLYBENCH_DUMP_END(name) printf("end dump: %s\n", name)
#define POLYBENCH_DUMP_ELEM(x) printf("%a ", (double)(x))
#define POLYBENCH_DUMP_EOL() printf("\n")

#endif /* PBMINI_H */
