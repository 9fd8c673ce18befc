"""Diamond tile sizes measured on real machines, which the time-tiling passes take instead of
the cache model's (`cache_model.diamond_tile`) where the build's target is one of them.

The model counts bytes: it knows nothing of a core's prefetchers, cache associativity or load
ports, so on a given machine another size can be faster. `scripts/tune_tile_sizes.py` times
the bench kernels with the model's sizes and with sizes around them and records a size here
only when it beats the model's by a margin. Entries are kept per target (`Target.tile_key`:
the CPU the flags select, its vector width and the L1 and L2 they imply), not per build host:
a build for a target gets the same tiles wherever it runs. Within a target, per class of
stencil: its space depth and its bytes per point (`Scop.bytes_per_point`), what the model's
sizes depend on.
"""

from __future__ import annotations

#: target key -> stencil class -> the tuner's verdict: "sizes" (time, then space outermost
#: first, as the passes' arguments), "model" (the model's sizes then), "speedup" (the model's
#: time over the sizes' time, geometric mean over "kernels"), "measured" (date and machine)
TUNED: dict[str, dict[str, dict]] = {
    # BEGIN TUNED (scripts/tune_tile_sizes.py rewrites what is between these lines)
    # END TUNED
}


def stencil_class(depth: int, bytes_per_point: int) -> str:
    """The name of a class of stencils that get the same tiles."""
    return f"{depth}-D, {bytes_per_point} bytes a point"


def tuned_diamond(target_key: str, depth: int, bytes_per_point: int) -> list[int] | None:
    """The measured diamond sizes for a stencil of this class on this target, if any."""
    entry = TUNED.get(target_key, {}).get(stencil_class(depth, bytes_per_point))
    return None if entry is None else list(entry["sizes"])
