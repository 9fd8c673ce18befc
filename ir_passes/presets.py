"""Named pipelines other stages choose by policy; a module with no imports, so the drop-in
compiler can name them without loading LLVM, libclang or islpy."""

#: the locality passes `-O3` and `auto` run: iterated stencils and pipelines of loop nests are
#: tiled when their data exceed the L2 cache
LOCALITY_PASSES = "time-tile-large,fuse-tile-large"
#: what `-O3` also runs when the flags ask for threads: nests whose outer loop carries no
#: dependence (single sweeps, a pipeline's stages the fused tiles do not take) on the team
SWEEPS_ON_THE_TEAM = "parallel-sweep-large"
#: what `-O3` runs for a core where non-temporal stores pay (`machine_model.streaming_stores_pay`):
#: also a nest's stores into arrays it does not read go past the caches on data beyond them
#: (under threads on the team; `parallel-sweep-large` then takes the smaller sizes)
STREAMS = "stream-sweep-large"


def locality_passes(threads: bool, streams: bool = False) -> str:
    """The `-O3` locality passes of a build with or without threads, for a core where
    streaming stores pay or not."""
    passes = [LOCALITY_PASSES] + [STREAMS] * streams + [SWEEPS_ON_THE_TEAM] * threads
    return ",".join(passes)
