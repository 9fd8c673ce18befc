"""What a C back end returns: the text of a module in a dialect, and what it left out."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EmittedC:
    """The C text of a module and the functions it leaves out ({name: reason})."""

    text: str
    functions: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    #: the C name of each function and global (IR names of `static` ones may not be C's)
    c_names: dict[str, str] = field(default_factory=dict)
    #: the globals the text defines (the others it declares `extern`)
    defined_globals: set[str] = field(default_factory=set)
    #: the C dialect it is written in (`DIALECTS`)
    dialect: str = "c"
    #: the functions run tile by tile through the target's runtime (C66x: EDMA)
    tiled: list[str] = field(default_factory=list)
    #: the functions written as FPGA kernels with stencil caches (`hls_kernel`)
    hls: list[str] = field(default_factory=list)
    #: their DDR words' width in elements (`--target hls:burst=W`)
    burst: int = 1
    #: the AI Engine kernels' buffer ports for the graph glue (`aie_glue.Port`s), or why a
    #: kernel has none
    aie_ports: dict[str, list | str] = field(default_factory=dict)
