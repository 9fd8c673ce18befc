"""Source locations on the IR as LLVM debug info (`!dbg`).

Every instruction the front end emits carries the `file:line:col` of the C it came from, in
LLVM's own format, so the locations travel with the IR through every pass and print with it;
remarks and diagnostics of later stages read them back with
`ir_passes.debuginfo.location_of`.
"""

from __future__ import annotations

import os

from llvmlite import ir

from ..diagnostics import SourceLocation


class DebugInfo:
    """The compile unit of one module and the DILocations of its functions."""

    def __init__(self, module: ir.Module, source_path: str):
        self.module = module
        self._files: dict[str, ir.DIValue] = {}
        self.main_file = self._file(source_path)
        self.unit = module.add_debug_info(
            "DICompileUnit",
            {
                "language": ir.DIToken("DW_LANG_C99"),
                "file": self.main_file,
                "producer": "pycc-stencil",
                "isOptimized": False,
                "runtimeVersion": 0,
                "emissionKind": ir.DIToken("LineTablesOnly"),
            },
            is_distinct=True,
        )
        module.add_named_metadata("llvm.dbg.cu", self.unit)
        module.add_named_metadata(
            "llvm.module.flags", [ir.IntType(32)(2), "Debug Info Version", ir.IntType(32)(3)]
        )
        module.add_named_metadata(
            "llvm.module.flags", [ir.IntType(32)(7), "Dwarf Version", ir.IntType(32)(5)]
        )

    def _file(self, path: str) -> ir.DIValue:
        """A DIFile as clang writes it: the path as the user spelled it, plus the work dir."""
        if path not in self._files:
            self._files[path] = self.module.add_debug_info(
                "DIFile", {"filename": path, "directory": os.getcwd()}
            )
        return self._files[path]

    def subprogram(self, function: ir.Function, where: SourceLocation) -> ir.DIValue:
        """Attach a DISubprogram to `function` and return it (the scope of its locations)."""
        file = self._file(where.file)
        subroutine = self.module.add_debug_info(
            "DISubroutineType", {"types": self.module.add_metadata([])}
        )
        program = self.module.add_debug_info(
            "DISubprogram",
            {
                "name": function.name,
                "scope": file,
                "file": file,
                "line": where.line,
                "type": subroutine,
                "scopeLine": where.line,
                "spFlags": ir.DIToken("DISPFlagDefinition"),
                "unit": self.unit,
            },
            is_distinct=True,
        )
        function.set_metadata("dbg", program)
        return program

    def location(self, scope: ir.DIValue, where: SourceLocation) -> ir.DIValue:
        return self.module.add_debug_info(
            "DILocation", {"line": where.line, "column": where.column, "scope": scope}
        )
