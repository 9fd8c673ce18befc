"""Named pipelines other stages choose by policy; a module with no imports, so the drop-in
compiler can name them without loading LLVM, libclang or islpy."""

#: the locality passes `-O3` and `auto` run: iterated stencils and pipelines of loop nests are
#: tiled when their data exceed the L2 cache
LOCALITY_PASSES = "time-tile-large,fuse-tile-large"
#: what `-O3` runs when the flags ask for threads: also nests whose outer loop carries no
#: dependence (single sweeps, a pipeline's stages the fused tiles do not take) on the team
THREADED_LOCALITY_PASSES = LOCALITY_PASSES + ",parallel-sweep-large"
#: what `-O3` runs on one thread for a core where non-temporal stores pay
#: (`machine_model.streaming_stores_pay`): also a nest's stores into arrays it does not read
#: go past the caches (not yet under threads, whose sweeps run on the team instead)
STREAMING_LOCALITY_PASSES = LOCALITY_PASSES + ",stream-sweep-large"


def locality_passes(threads: bool, streams: bool = False) -> str:
    """The `-O3` locality passes of a build with or without threads, for a core where
    streaming stores pay or not."""
    if threads:
        return THREADED_LOCALITY_PASSES
    return STREAMING_LOCALITY_PASSES if streams else LOCALITY_PASSES
