"""What a user needs around an AI Engine kernel to drop it in a design (the paper has none):
its buffer ports, an ADF graph, and a host testbench.

The kernel keeps the C function's pointers; `wrapper` gives it ADF buffer ports
(`adf::input_buffer<T, adf::extents<N>>`, `.data()`), one per array, of the elements the
kernel touches. `graph_header` declares the graph: the kernel (`kernel::create`, `source`,
`runtime<ratio>`), a PLIO per port reading or writing `data/NAME.txt`, `connect<>`.
`graph_main` is the `main` the AIE tools' simulators run. `testbench` fills the inputs
(values the kernel's check uses: integers in [-8, 8], floats in [0.5, 2)), writes their data
files, runs the graph, reads the outputs back and compares them with the original C function
on the same inputs. On the host the glue builds against runtime/aie/pycc_adf.h."""

from __future__ import annotations

from dataclasses import dataclass

from .aie_convolution import NotAConvolution
from .aie_layout import PACKED_SUFFIX

#: the ADF name of each element type
ADF_TYPES = {"int16": "int16", "int32": "int32", "float": "float"}


@dataclass(frozen=True)
class Port:
    name: str
    output: bool
    element: str  # int16, int32, float
    elements: int
    packed: bool = False  # the kernel takes it packed (`aie_layout`)


def ports(plan, arguments: list[str]) -> list[Port]:
    """The buffer ports of the kernel `plan` writes, one per parameter (all arrays)."""
    conv = plan.conv
    if conv.accumulates:
        raise NotAConvolution("the kernel adds to its output (an output buffer port is not read)")
    extents = plan.buffer_elements()
    packed = {layout.base for layout in conv.layouts}
    found = []
    for name in arguments:
        if name not in extents:
            raise NotAConvolution(f"the parameter '{name}' is not an array the kernel uses")
        output = name == conv.output.base
        found.append(Port(name, output, conv.element, extents[name], name in packed))
    return found


def _buffer(port: Port) -> str:
    kind = "output_buffer" if port.output else "input_buffer"
    return f"adf::{kind}<{ADF_TYPES[port.element]}, adf::extents<{port.elements}>> &{port.name}"


def _prototype(function: str, found: list[Port]) -> str:
    return f"void {function}_ports({', '.join(_buffer(p) for p in found)})"


def wrapper(function: str, found: list[Port]) -> str:
    """C++ for the kernel's file: the kernel (FUNCTION, or FUNCTION_packed on packed arrays)
    behind ADF buffer ports."""
    kernel = function + (PACKED_SUFFIX if any(p.packed for p in found) else "")
    calls = ", ".join(f"{p.name}.data()" for p in found)
    return "\n".join([
        "", "#ifdef __AIENGINE__", "#include <adf.h>", "#else", '#include "pycc_adf.h"', "#endif",
        f"{_prototype(function, found)} {{", f"  {kernel}({calls});", "}", "",
    ])  # fmt: skip


def graph_header(stem: str, function: str, found: list[Port]) -> str:
    inputs = [p for p in found if not p.output]
    outputs = [p for p in found if p.output]
    lines = [
        f"/* {function}_graph.h by pycc-stencil: an ADF graph of the AI Engine kernel {function}",
        f"   ({stem}.cc), a PLIO per buffer port reading or writing data/PORT.txt */",
        "#pragma once",
        "#ifdef __AIENGINE__", "#include <adf.h>", "#else", '#include "pycc_adf.h"', "#endif",
        "",
        f"{_prototype(function, found)};",
        "",
        f"class {function}_graph : public adf::graph {{",
        " public:",
        "  adf::kernel k;",
        *[f"  adf::input_plio {p.name};" for p in inputs],
        *[f"  adf::output_plio {p.name};" for p in outputs],
        f"  {function}_graph() {{",
        f"    k = adf::kernel::create({function}_ports);",
    ]  # fmt: skip
    for index, port in enumerate(inputs):
        lines += [
            f'    {port.name} = adf::input_plio::create("{port.name}", adf::plio_64_bits, '
            f'"data/{port.name}.txt");',
            f"    adf::connect<>({port.name}.out[0], k.in[{index}]);",
        ]
    for index, port in enumerate(outputs):
        lines += [
            f'    {port.name} = adf::output_plio::create("{port.name}", adf::plio_64_bits, '
            f'"data/{port.name}.txt");',
            f"    adf::connect<>(k.out[{index}], {port.name}.in[0]);",
        ]
    lines += [
        f'    adf::source(k) = "{stem}.cc";',
        "    adf::runtime<adf::ratio>(k) = 0.9;",
        "  }",
        "};",
        "",
    ]
    return "\n".join(lines)


def graph_main(function: str) -> str:
    """The graph instance and the `main` the AIE tools' simulators (and the host) run."""
    return "\n".join([
        f"/* {function}_graph.cpp by pycc-stencil: the graph the AIE compiler builds */",
        f'#include "{function}_graph.h"', "", f"{function}_graph graph;", "",
        "int main() {", "  graph.init();", "  graph.run(1);", "  graph.end();", "  return 0;",
        "}", "",
    ])  # fmt: skip


def testbench(function: str, found: list[Port]) -> str:
    """A host program: inputs to data files, the graph run, its outputs against the original
    C function (`pycc_original_FUNCTION`) on the same inputs; exit status 0 when they agree.
    A packed port's data file holds the packed array (FUNCTION_pack_NAME, from the kernel's
    file); its output is unpacked before the comparison."""
    ctype = {"int16": "int16_t", "int32": "int32_t", "float": "float"}
    packed = [p for p in found if p.packed]
    lines = [
        f"/* tb_{function}.cc by pycc-stencil: the graph against the original C */",
        "#include <cstdio>", "#include <cstring>", "#include <fstream>", "#include <vector>",
        f'#include "{function}_graph.h"', "",
        f'extern "C" void pycc_original_{function}({", ".join("void *" for _ in found)});',
        *[f'extern "C" void {function}_{way}_{p.name}(const void *, void *);'
          for p in packed for way in ("pack", "unpack")],
        f"{function}_graph graph;", "",
        "static unsigned pycc_seed = 12345;",
        "static unsigned pycc_next() { return pycc_seed = pycc_seed * 1103515245u + 12345u; }",
        "template <typename T> [[maybe_unused]] static T pycc_value(T *) {",
        "  return (T)((int)(pycc_next() >> 16) % 17 - 8);",
        "}",
        "[[maybe_unused]] static float pycc_value(float *) {",
        "  return 0.5f + (pycc_next() >> 8) / 11184810.0f;",
        "}",
        "",
        "int main() {",
        "  int status = 0;",
    ]  # fmt: skip
    for port in found:
        t = ctype[port.element]
        lines.append(f"  std::vector<{t}> {port.name}({port.elements});")
        file = port.name
        if port.packed:
            file = f"{port.name}_packed"
            lines.append(f"  std::vector<{t}> {file}({port.elements});")
        if port.output:
            continue
        lines.append(f"  for (auto &v : {port.name}) v = pycc_value(&v);")
        if port.packed:
            lines.append(f"  {function}_pack_{port.name}({port.name}.data(), {file}.data());")
        lines += [
            f'  {{ std::ofstream out("data/{port.name}.txt"); out.precision(9);',
            f"    for (auto v : {file}) out << +v << '\\n'; }}",
        ]
    lines += ["  graph.init();", "  graph.run(1);", "  graph.end();"]
    args = ", ".join(f"{p.name}.data()" for p in found)
    lines.append(f"  pycc_original_{function}({args});")
    for port in (p for p in found if p.output):
        t, graph = ctype[port.element], f"{port.name}_graph"
        lines += [
            f"  std::vector<{t}> {graph}({port.elements});",
            f'  {{ std::ifstream in("data/{port.name}.txt"); double value; size_t k = 0;',
            f"    std::vector<{t}> &read = {f'{port.name}_packed' if port.packed else graph};",
            "    for (; k < read.size() && in >> value; k++) read[k] = (" + t + ")value;",
            "    if (k < read.size()) {",
            f'      std::printf("{port.name}: the graph wrote %zu of {port.elements} values\\n",',
            "                  k);",
            "      status = 1; } }",
        ]
        if port.packed:
            lines.append(
                f"  {function}_unpack_{port.name}({port.name}_packed.data(), {graph}.data());"
            )
        lines += [
            f"  for (size_t k = 0; k < {port.name}.size() && !status; k++)",
            f"    if ({graph}[k] != {port.name}[k]) {{",
            f'      std::printf("{port.name}[%zu]: graph %g, original %g\\n", k, '
            f"(double){graph}[k], (double){port.name}[k]);",
            "      status = 1; }",
        ]
    lines += ['  std::printf(status ? "differ\\n" : "same\\n");', "  return status;", "}", ""]
    return "\n".join(lines)
