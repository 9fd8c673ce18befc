/* jacobi-2d problem sizes, PolyBench style: a dataset macro (MINI_DATASET ... EXTRALARGE_DATASET,
 * default LARGE_DATASET) picks TSTEPS and N; -DTSTEPS=.. / -DN=.. override them one by one. */
#ifndef JACOBI_2D_H
#define JACOBI_2D_H

#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) \
    && !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

#if defined(MINI_DATASET)
#define JACOBI_2D_TSTEPS_ 20
#define JACOBI_2D_N_ 30
#elif defined(SMALL_DATASET)
#define JACOBI_2D_TSTEPS_ 40
#define JACOBI_2D_N_ 90
#elif defined(MEDIUM_DATASET)
#define JACOBI_2D_TSTEPS_ 100
#define JACOBI_2D_N_ 250
#elif defined(LARGE_DATASET)
#define JACOBI_2D_TSTEPS_ 500
#define JACOBI_2D_N_ 1300
#else
#define JACOBI_2D_TSTEPS_ 1000
#define JACOBI_2D_N_ 2800
#endif

#ifndef TSTEPS
#define TSTEPS JACOBI_2D_TSTEPS_
#endif
#ifndef N
#define N JACOBI_2D_N_
#endif

#define _PB_TSTEPS POLYBENCH_LOOP_BOUND(TSTEPS, tsteps)
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)

#endif /* JACOBI_2D_H */
