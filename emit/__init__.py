"""Emitters: from (optimized) LLVM IR to what a target runs."""
