"""Named pipelines other stages choose by policy; a module with no imports, so the drop-in
compiler can name them without loading LLVM, libclang or islpy."""

#: the locality passes `-O3` and `auto` run: iterated stencils and pipelines of loop nests are
#: tiled when their data exceed the L2 cache
LOCALITY_PASSES = "time-tile-large,fuse-tile-large"
