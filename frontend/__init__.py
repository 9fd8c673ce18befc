"""C front end: libclang AST -> LLVM IR (llvmlite.ir), with C semantics and source locations."""

from .module import lower_file
from .signature import FunctionInfo, LoweredModule, Param, SkippedFunction

__all__ = ["FunctionInfo", "LoweredModule", "Param", "SkippedFunction", "lower_file"]
