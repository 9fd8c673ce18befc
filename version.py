"""pycc-stencil's version (a leaf module: whatever imports it imports nothing else)."""

__version__ = "0.1.0"
