"""Schedule transformations, one per module: each takes a SCoP, its dependences and the
requested parameters and returns a new isl schedule tree (checked legal) or the reason why not."""
