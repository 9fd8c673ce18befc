"""How wide LLVM's vectorizers make vectors in the code pycc-stencil compiles.

LLVM's tuning for a named AVX-512 CPU prefers 256-bit vectors (`-march=native` on a Xeon
"Emerald Rapids" gives LLVM the CPU `emeraldrapids`, tuned `prefer-256-bit`), while its
generic CPU (`-march=x86-64-v4`) and gcc 12 under `-march=native` on that Xeon use 512 bits.
pycc-stencil decides itself: the width the flags ask for (gcc's `-mprefer-vector-width=`
and `-mprefer-avx128`, the last one winning), else the widest the ISA has. The code it takes
over is time-tiled stencils running in cache, where 512-bit vectors paid on that Xeon
(nine iterated stencils 1.04-1.26x the 256-bit code on one thread, side by side in one run;
docs/tiling_benchmarks.md, "512-bit vectors"); no AVX-512 CPU with frequency licences
(Skylake-SP) was measured. The `simd` pass follows for elements of 4 bytes or more and binds
256 bits of narrower ones (`HostX86.simd_lanes`, measured: docs/simd_benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence

#: LLVM's tuning features for each width gcc's `-mprefer-vector-width=` takes
_PREFERENCE = {
    "128": "+prefer-128-bit,+prefer-256-bit",
    "256": "-prefer-128-bit,+prefer-256-bit",
    "512": "-prefer-128-bit,-prefer-256-bit",
    "none": "-prefer-128-bit,-prefer-256-bit",
}


def preferred_width(flags: Sequence[str], features: str) -> str | None:
    """`128`, `256`, `512` or `none` as the flags say, else `512` where `features` (LLVM's,
    the last `+`/`-` of a name winning) have AVX-512F, else None (the CPU's tuning)."""
    chosen = None
    for flag in flags:
        if flag.startswith("-mprefer-vector-width="):
            chosen = flag.partition("=")[2]
        elif flag == "-mprefer-avx128":
            chosen = "128"
    if chosen in _PREFERENCE:
        return chosen
    return "512" if "avx512f" in enabled_features(features) else None


def enabled_features(features: str) -> set[str]:
    """The names an LLVM feature string (`+avx2,-avx512f,...`) leaves on, the last sign of
    each name winning."""
    signs = {name[1:]: name[0] for name in features.split(",") if name[:1] in "+-"}
    return {name for name, sign in signs.items() if sign == "+"}


def with_preferred_width(flags: Sequence[str], features: str) -> str:
    """`features` followed by the tuning features of `preferred_width` (LLVM applies them in
    order, after the CPU's own tuning)."""
    width = preferred_width(flags, features)
    return f"{features},{_PREFERENCE[width]}" if width else features
