"""Source locations of IR instructions, read from their `!dbg` DILocation.

Every diagnostic and remark about IR speaks in the user's terms (`file:line:col`); the front
end attaches the locations, and this is the one place that reads them back.
"""

from __future__ import annotations

from llvmlite import ir

from ...diagnostics import SourceLocation


def _field(node: object, key: str) -> object:
    if isinstance(node, ir.DIValue):
        for name, value in node.operands:
            if name == key:
                return value
    return None


def _text(value: object) -> str | None:
    if isinstance(value, ir.MetaDataString):
        return value.string
    return value if isinstance(value, str) else None


def location_of(instruction: ir.Instruction) -> SourceLocation | None:
    """The instruction's source location, or None if it carries no debug location."""
    loc = instruction.metadata.get("dbg") if hasattr(instruction, "metadata") else None
    if not isinstance(loc, ir.DIValue) or loc.kind != "DILocation":
        return None
    scope = _field(loc, "scope")
    while scope is not None and _field(scope, "file") is None:
        scope = _field(scope, "scope")
    file_node = _field(scope, "file")
    filename = _text(_field(file_node, "filename")) or "<unknown>"
    line, column = _field(loc, "line"), _field(loc, "column")
    return SourceLocation(filename, int(line or 0), int(column or 0))


def describe(instruction: ir.Instruction) -> str:
    """`file:line:col` if known, else the function name and the instruction text."""
    location = location_of(instruction)
    if location is not None:
        return str(location)
    return f"in {instruction.function.name}: `{str(instruction).strip()}`"
