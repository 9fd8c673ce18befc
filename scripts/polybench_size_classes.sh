#!/usr/bin/env bash
# Issue 19's "never lose": PolyBench/C 4.2.1's five stencils at each size class, built by gcc and
# by pycc-stencil's compiler mode (default policy) with `-O3 -march=native -ffp-contract=off`
# (where the stencils are taken over), their dumped arrays compared byte for byte and their
# kernel times (POLYBENCH_TIME, cache flushed before each) timed best of REPS, the two
# programs alternated. PolyBench itself is not part of this repository: give a checkout of it
# (e.g. a clone of github.com/shinawy/PolyBenchC-4.2.1 at 3e87254).
#
#   scripts/polybench_size_classes.sh POLYBENCH_DIR [REPS] [SIZE ...]
#
# SIZE: MINI SMALL MEDIUM LARGE EXTRALARGE (default: MINI SMALL MEDIUM LARGE). One line per
# kernel and size: gcc's and pycc-stencil's best seconds, gcc / pycc-stencil, whether the
# dumps are identical, whether pycc-stencil took the kernel over (its report).
# Results: docs/tiling_benchmarks.md ("PolyBench's size classes").
set -euo pipefail
polybench=$(cd "$1" && pwd)
reps=${2:-5}
shift $(( $# > 1 ? 2 : 1 ))
sizes=("${@:-MINI SMALL MEDIUM LARGE}")
read -r -a sizes <<<"${sizes[*]}"
pycc="${PYCC:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/pycc-stencil}"
work=$(mktemp -d)
export XDG_CACHE_HOME="$work/cache"
trap '"$pycc" server stop >/dev/null 2>&1; rm -rf "$work"' EXIT
flags=(-O3 -march=native -ffp-contract=off -DPOLYBENCH_USE_C99_PROTO -I "$polybench/utilities")
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs;" \
  "gcc: $(gcc -dumpfullversion); flags: ${flags[*]:0:3}; best of $reps"
echo "| size | kernel | gcc s | pycc-stencil s | gcc / pycc | dumps | taken over |"
echo "|---|---|---|---|---|---|---|"
for size in "${sizes[@]}"; do
  for kernel in jacobi-1d jacobi-2d heat-3d fdtd-2d seidel-2d; do
    source="$polybench/stencils/$kernel/$kernel.c"
    for compiler in gcc pycc; do
      cc=gcc
      [ "$compiler" = pycc ] && cc=$pycc
      for kind in time dump; do
        define=-DPOLYBENCH_TIME
        [ "$kind" = dump ] && define=-DPOLYBENCH_DUMP_ARRAYS
        PYCC_REPORT="$work/$kernel-$size.jsonl" "$cc" "${flags[@]}" "-D${size}_DATASET" "$define" \
          -I "$(dirname "$source")" "$polybench/utilities/polybench.c" "$source" \
          -o "$work/$compiler-$kind" -lm
      done
      "$work/$compiler-dump" 2>"$work/$compiler.dump" >/dev/null
    done
    dumps=DIFFER
    cmp -s "$work/gcc.dump" "$work/pycc.dump" && dumps=identical
    taken=no
    grep -q '"compiled_by": "pycc-stencil"' "$work/$kernel-$size.jsonl" && taken=yes
    best_gcc=inf best_pycc=inf
    for _ in $(seq "$reps"); do
      best_gcc=$(python3 -c "print(min(float('$best_gcc'), $("$work/gcc-time")))")
      best_pycc=$(python3 -c "print(min(float('$best_pycc'), $("$work/pycc-time")))")
    done
    ratio=$(python3 -c "print(f'{$best_gcc / max($best_pycc, 1e-6):.2f}')")
    echo "| $size | $kernel | $best_gcc | $best_pycc | $ratio | $dumps | $taken |"
  done
done
