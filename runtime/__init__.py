"""Running code: the host JIT harness (load, reference checking) and the target runtimes."""
