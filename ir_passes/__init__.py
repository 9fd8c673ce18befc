"""IR analyses shared by every pass, the pass pipeline, and the passes."""
