"""A compile's outputs kept and given back: the object (or assembly), what cc printed, the
dependency file, as ccache does.

A warm build then costs `cc -E` and a cache read per file instead of the two compiles a
taken-over file needs (cc's rewritten unit, and the whole file for its diagnostics). The key
is the result cache's (the tool, cc, flags, source, preprocessed unit) plus what else the
outputs depend on: the command line itself (output and dependency-file names), the working
directory (debug information names it), whether stderr is a terminal (colours), and the
environment cc reads. A compile whose outputs depend on files or state outside that key
(profiles, plugins, specs, extra output files such as `.su` or `.gcno`) is never replayed.
"""

from __future__ import annotations

import os
import sys

from . import dropin_cache as cache
from .emit.output_files import write_output

#: options that read files outside the key, or write files besides the output and the
#: dependency file: such compiles always run
_NOT_REPLAYABLE = (
    "-fstack-usage", "-gsplit-dwarf", "-save-temps", "-fdump-", "-ftest-coverage", "--coverage",
    "-fcallgraph-info", "-fprofile", "-fauto-profile", "-fopt-info", "-aux-info", "-specs",
    "--specs", "-fplugin", "-B", "-v", "-Wp,", "-fcreate-profile", "-fbranch-probabilities",
)  # fmt: skip
#: environment variables that change what cc writes or prints
_CC_ENVIRONMENT = ("LANG", "LANGUAGE", "GCC_", "LC_", "COMPILER_PATH", "GCC_EXEC_PREFIX", "TMPDIR")
#: environment variables that make cc write a dependency file of their own
_DEPENDENCY_ENVIRONMENT = ("DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES")


def replay_key(key: str, command: list[str], flags: list[str], unit: bytes) -> str | None:
    """The key of the outputs of `command` (cc's argument list for the whole file, `key`
    the result cache's, `unit` the preprocessed file), or None if they are not replayable
    (also when the assembler reads a file: `.incbin`)."""
    if any(f.startswith(_NOT_REPLAYABLE) for f in flags) or b".incbin" in unit:
        return None
    if any(os.environ.get(name) for name in _DEPENDENCY_ENVIRONMENT):
        return None
    environment = sorted(
        f"{name}={value}" for name, value in os.environ.items() if name.startswith(_CC_ENVIRONMENT)
    )
    return cache.cache_key(
        key, "outputs", "\0".join(command), os.getcwd(), str(sys.stderr.isatty()), *environment
    )


def record(key: str, output: str, printed: bytes, dependency_file: str | None) -> None:
    """Keep the finished `output`, cc's `printed` diagnostics and the dependency file."""
    if not os.path.isfile(output) or (dependency_file and not os.path.isfile(dependency_file)):
        return  # a device or a pipe (`-o /dev/stdout`): nothing to read back
    blobs = {"printed": printed}
    try:
        with open(output, "rb") as handle:
            blobs["output"] = handle.read()
        if dependency_file is not None:
            with open(dependency_file, "rb") as handle:
                blobs["dependencies"] = handle.read()
    except OSError:
        return
    cache.store(key, {"dependency_file": dependency_file}, blobs)


def replay(key: str) -> bytes | None:
    """Give back the outputs kept under `key`: print what cc printed, write the dependency
    file; the output's bytes, for the caller to publish (None, nothing done: none kept)."""
    hit = cache.load(key)
    if hit is None or "output" not in hit[1]:
        return None
    meta, blobs = hit
    dependency_file = meta.get("dependency_file")
    if (dependency_file is None) != ("dependencies" not in blobs):
        return None
    sys.stderr.buffer.write(blobs["printed"])
    sys.stderr.flush()
    if dependency_file is not None:
        try:
            write_output(dependency_file, blobs["dependencies"], into_existing=True)
        except OSError:
            return None  # the compile runs and reports it
    return blobs["output"]
