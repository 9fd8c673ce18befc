"""The ground floor every stage shares: IR utilities and analyses that import nothing else of
the project (CFG, dominators, natural loops, induction variables and trip counts, the symbolic
algebra, affine addresses, alignment facts, memory and taint, copying and rewriting, debug
locations, the facts side table, the analysis cache, the Target interface)."""
