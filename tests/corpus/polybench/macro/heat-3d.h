/* heat-3d problem sizes, PolyBench style: a dataset macro (MINI_DATASET ... EXTRALARGE_DATASET,
 * default LARGE_DATASET) picks TSTEPS and N; -DTSTEPS=.. / -DN=.. override them one by one. */
#ifndef HEAT_3D_H
#define HEAT_3D_H

#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) \
    && !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

#if defined(MINI_DATASET)
#define HEAT_3D_TSTEPS_ 20
#define HEAT_3D_N_ 10
#elif defined(SMALL_DATASET)
#define HEAT_3D_TSTEPS_ 40
#define HEAT_3D_N_ 20
#elif defined(MEDIUM_DATASET)
#define HEAT_3D_TSTEPS_ 100
#define HEAT_3D_N_ 40
#elif defined(LARGE_DATASET)
#define HEAT_3D_TSTEPS_ 500
#define HEAT_3D_N_ 120
#else
#define HEAT_3D_TSTEPS_ 1000
#define HEAT_3D_N_ 200
#endif

#ifndef TSTEPS
#define TSTEPS HEAT_3D_TSTEPS_
#endif
#ifndef N
#define N HEAT_3D_N_
#endif

#define _PB_TSTEPS POLYBENCH_LOOP_BOUND(TSTEPS, tsteps)
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)

#endif /* HEAT_3D_H */
