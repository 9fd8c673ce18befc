"""The drop-in compiler: `CC=pycc-stencil` compiles stencil kernels through pycc-stencil and
everything else through the system compiler, into the outputs `cc` would produce."""
