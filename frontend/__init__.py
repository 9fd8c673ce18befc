"""C front end: libclang AST -> LLVM IR (llvmlite.ir), with C semantics and source locations."""
