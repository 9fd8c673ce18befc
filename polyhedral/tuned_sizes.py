"""Diamond tile sizes measured on real machines, which the time-tiling passes take instead of
the cache model's (`cache_model.diamond_tile`) where the build's target is one of them.

The model counts bytes: it knows nothing of a core's prefetchers, cache associativity or load
ports, so on a given machine another size can be faster. `scripts/tune_tile_sizes.py` times
the bench kernels with the model's sizes and with sizes around them and records a size here
only when it beats the model's by a margin. Entries are kept per target (`Target.tile_key`:
the CPU the flags select, its vector width and the L1 and L2 they imply), not per build host:
a build for a target gets the same tiles wherever it runs. Within a target, per class of
stencil: its space depth and its bytes per point (`Scop.bytes_per_point`), what the model's
sizes depend on, and the loads a point makes (a 27-point box does five times the in-cache work
of a 7-point star on the same bytes). An entry may also say that time tiles do not pay for the
class on the target ("sizes": None): where the tiled code lost to cc's untiled code at a size
the tuner measured, `-O3` leaves such nests alone (issue 19's "never lose", by measurement).
"""

from __future__ import annotations

from collections.abc import Callable

#: target key -> stencil class -> the tuner's verdict: "sizes" (time, then space outermost
#: first, as the passes' arguments; None: no time tiles), "model" (the model's sizes then),
#: "speedup" (the model's time over the sizes' time, geometric mean over "kernels"),
#: "against_gcc" (for None: the tiles' speed over gcc's at each bench size measured),
#: "measured" (date, CPU, how)
TUNED: dict[str, dict[str, dict]] = {
    # BEGIN TUNED (scripts/tune_tile_sizes.py rewrites what is between these lines)
    "emeraldrapids, 512-bit vectors, L1 49152, L2 2097152": {
        "3-D, 16 bytes and 27 loads a point": {
            "sizes": None,
            "against_gcc": {"tiling": 1.053, "l3": 0.935},
            "model": [32, 32, 16, 256],
            "kernels": ["box-3d27"],
            "measured": "2026-11-29, Intel(R) Xeon(R) Processor (family 6 model 207, AVX512F AVX2 FMA), 2 cores, 1 thread, best of 5",
        },
    },
    "rocketlake, 512-bit vectors, L1 49152, L2 2097152": {
        "3-D, 16 bytes and 7 loads a point": {
            "sizes": [32, 32, 4, 256],
            "speedup": 1.057,
            "model": [32, 32, 16, 256],
            "kernels": ["heat-3d", "star-3d"],
            "measured": "2026-11-29, Intel(R) Xeon(R) Processor (family 6 model 167, AVX512F AVX2 FMA), 2 cores, 1 thread, best of 5",
        },
    },
    # END TUNED
}


def stencil_class(depth: int, bytes_per_point: int, loads: int) -> str:
    """The name of a class of stencils that get the same tiles."""
    return f"{depth}-D, {bytes_per_point} bytes and {loads} loads a point"


def measured(target_key: str, name: str) -> dict | None:
    """The tuner's entry for the class `name` on the target, if it has one."""
    return TUNED.get(target_key, {}).get(name) if target_key else None


def lost(target_key: str, name: str, tiles: str) -> str | None:
    """Why a pass with no sizes given refuses a nest of the class: the target's measurements
    say its `tiles` ("time tiles", "fused tiles") lost to the untiled code; else None."""
    entry = measured(target_key, name)
    if entry is None or entry["sizes"] is not None:
        return None
    return (
        f"{tiles} lost to the untiled code for {name} on {target_key} (measured: "
        "polyhedral/tuned_sizes.py)"
    )


def default_sizes(
    target_key: str, name: str, model: Callable[[], list[int]]
) -> tuple[list[int], str]:
    """The sizes of a nest of the class where none are given, those measured for the target
    or the cache `model`'s, and the remark's note of where they came from."""
    entry = measured(target_key, name)
    if entry is not None and entry["sizes"] is not None:
        return list(entry["sizes"]), f"; sizes measured for {target_key} ({name})"
    target = f" for {target_key}" if target_key else ""
    return model(), f"; sizes from the cache model{target} ({name})"
