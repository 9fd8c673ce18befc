"""Random iterated stencil programs for scripts/reliability.py.

Each program is a complete C file: one to three kernels (Jacobi two-buffer sweeps, in-place
Gauss-Seidel sweeps, pointer swaps, `A[(t+1)%2] = f(A[t%2])`, pipelines of nests, reductions)
over 1-D/2-D/3-D arrays of float, double or int, written with fixed-size arrays, VLA parameters
or plain pointers, on odd or prime sizes; `main` initializes every array deterministically,
runs the kernels, prints a checksum of every byte (and each reduction's value) and exits with
a status taken from the data. The shapes are the ones pycc-stencil's passes are written for, so
a build really exercises them (the harness checks the report). The programs have no undefined
behaviour: integer stencils are weighted averages of non-negative values (no overflow), every
access stays inside its array, and floating-point values stay bounded.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CTYPES = ("float", "double", "int")
LAYOUTS = ("fixed", "vla", "pointer")
#: sizes per dimensionality: odd and prime, and degenerate ones (empty interiors)
SIZES = {
    1: (1, 2, 5, 37, 101, 257, 1021, 4099),
    2: (1, 3, 7, 13, 31, 37, 61, 97),
    3: (2, 5, 7, 11, 13, 17, 23),
}
STEPS = (0, 1, 2, 3, 5, 7)
STANDARDS = ((), ("-std=c99",), ("-std=c11",), ("-std=gnu11",))
AXES = "ijk"


@dataclass(frozen=True)
class StencilProgram:
    """A generated program and the flags it is meant to be built with."""

    name: str
    source: str
    cflags: tuple[str, ...]
    kernels: tuple[str, ...]


@dataclass(frozen=True)
class Grid:
    """The arrays' shape, element type and how the kernels see them."""

    dims: int
    sizes: tuple[int, ...]
    ctype: str
    layout: str

    @property
    def extents(self) -> list[str]:
        """The extent of each dimension as the kernels write it."""
        if self.layout == "fixed":
            return [f"N{d}" for d in range(self.dims)]
        return [f"n{d}" for d in range(self.dims)]

    def literal(self, value: float) -> str:
        """A constant of the element type (float literals keep their `f`)."""
        if self.ctype == "int":
            return str(int(value))
        text = repr(float(value))
        return text + "f" if self.ctype == "float" else text

    def param(self, name: str, planes: int = 0) -> str:
        """The declaration of array parameter `name` (with a leading plane dimension)."""
        lead = f"[{planes}]" if planes else ""
        if self.layout == "pointer":
            return f"{self.ctype} *{name}"
        return f"{self.ctype} {name}{lead}" + "".join(f"[{e}]" for e in self.extents)

    def at(self, name: str, index: list[str], plane: str = "") -> str:
        """Element `name[index]` (in `plane` of a two-plane array)."""
        if self.layout != "pointer":
            lead = f"[{plane}]" if plane else ""
            return name + lead + "".join(f"[{i}]" for i in index)
        flat = index[0]
        for extent, i in zip(self.extents[1:], index[1:]):
            flat = f"({flat}) * {extent} + {i}"
        if plane:
            volume = " * ".join(self.extents)
            flat = f"({plane}) * {volume} + {flat}"
        return f"{name}[{flat}]"

    def extent_params(self) -> list[str]:
        """The `int n0, int n1` parameters (none for fixed sizes)."""
        return [] if self.layout == "fixed" else [f"int {e}" for e in self.extents]

    def extent_args(self) -> list[str]:
        return [] if self.layout == "fixed" else [str(s) for s in self.sizes]


def listed(*parts: str | list[str]) -> str:
    """Parameters or arguments joined with commas (lists spliced in)."""
    flat = [p for part in parts for p in ([part] if isinstance(part, str) else part)]
    return ", ".join(flat)


def neighbours(rng: random.Random, dims: int, radius: int) -> list[tuple[int, ...]]:
    """A star of `radius`, or for radius 1 sometimes the full box."""
    if radius == 1 and dims < 3 and rng.random() < 0.4:
        points: list[tuple[int, ...]] = [()]
        for _ in range(dims):
            points = [p + (o,) for p in points for o in (-1, 0, 1)]
        return points
    points = [(0,) * dims]
    for d in range(dims):
        for o in range(1, radius + 1):
            for s in (-o, o):
                points.append(tuple(s if e == d else 0 for e in range(dims)))
    return points


def shifted(offset: tuple[int, ...]) -> list[str]:
    """The subscripts `i-1, j, k+2` of a neighbour."""
    out = []
    for axis, o in zip(AXES, offset):
        out.append(axis if o == 0 else f"{axis} {'+' if o > 0 else '-'} {abs(o)}")
    return out


def combination(rng: random.Random, grid: Grid, read, points: list[tuple[int, ...]]) -> str:
    """A weighted average of `read(offset)` over `points`: bounded for every element type."""
    weights = [rng.randint(1, 3) for _ in points]
    terms = " + ".join(
        read(p) if w == 1 else f"{grid.literal(w)} * {read(p)}" for p, w in zip(points, weights)
    )
    if grid.ctype == "int":
        return f"({terms}) / {sum(weights)}"
    return f"{grid.literal(round(1.0 / sum(weights), 6))} * ({terms})"


def nest(grid: Grid, lo: int, body: str, indent: str) -> str:
    """`for` loops over the interior `[lo, extent - lo)` of every axis around `body`."""
    lines = []
    for d, extent in enumerate(grid.extents):
        pad = indent + "  " * d
        axis = AXES[d]
        lines.append(f"{pad}for ({axis} = {lo}; {axis} < {extent} - {lo}; {axis}++)")
    lines.append(indent + "  " * grid.dims + body)
    return "\n".join(lines)


@dataclass
class Kernel:
    """One generated function: its text and how main calls it."""

    name: str
    text: str
    call: str
    returns: bool = False


@dataclass(frozen=True)
class TimeLoop:
    """How a kernel writes its time loop: the type of `t`, the loop's head (opening its
    body's brace) and what closes the body."""

    counter: str
    head: str
    tail: str = "  }\n"


#: the ways legacy code counts time steps (the first as PolyBench does, the others as the
#: passes must read them too: counting down, a while loop, a short counter, a do-while loop)
TIME_LOOPS = (
    TimeLoop("int", "  for (t = 0; t < tsteps; t++) {\n"),
    TimeLoop("int", "  for (t = tsteps; t > 0; t--) {\n"),
    TimeLoop("int", "  t = 0;\n  while (t < tsteps) {\n", "    t++;\n  }\n"),
    TimeLoop("short", "  for (t = 0; t < (short)tsteps; t++) {\n"),
    TimeLoop("int", "  t = 0;\n  do {\n", "    t++;\n  } while (t < tsteps);\n"),
)


class Writer:
    """Writes the kernels of one program over arrays A, B, C (and P with two planes); the
    time loops' forms come from `styles` (a generator of its own, so that adding forms left
    the rest of each seed's program as it was)."""

    def __init__(
        self, rng: random.Random, grid: Grid, styles: random.Random, extras: random.Random
    ):
        self.rng = rng
        self.grid = grid
        self.static = ""
        self.styles = styles
        #: draws the legacy extras (a timer around the time loop, grids in global pointers or
        #: in struct members),
        #: from a generator of its own for the same reason
        self.extras = extras
        self.loop = TIME_LOOPS[0]

    def timer(self) -> tuple[str, str]:
        """Sometimes a `clock()` before the time loop and a test of it after (legacy code's
        timing: calls into the C library around the nest)."""
        if self.extras.random() < 0.3:
            after = '  if (clock() < start) puts("clock went back");\n'
            return "  clock_t start = clock();\n", after
        return "", ""

    def average(self, array: str, radius: int, plane: str = "") -> str:
        """A weighted average of the neighbours of the current point in `array`."""
        g = self.grid
        points = neighbours(self.rng, g.dims, radius)
        return combination(self.rng, g, lambda p: g.at(array, shifted(p), plane), points)

    def header(self, name: str, result: str, params: str, timed: bool = True) -> str:
        """The signature (sometimes `static`) and the loop counters; a timed kernel draws
        the form of its time loop (`self.loop`)."""
        storage = "static " if self.rng.random() < 0.3 else ""
        counters = ", ".join(AXES[: self.grid.dims])
        text = f"{storage}{result} {name}({params})\n{{\n  int {counters};\n"
        if timed:
            self.loop = (
                TIME_LOOPS[0] if self.styles.random() < 0.5 else self.styles.choice(TIME_LOOPS)
            )
            text += f"  {self.loop.counter} t;\n"
        return text

    def jacobi(self, name: str, radius: int, steps: int) -> Kernel:
        """PolyBench's two-buffer form: B = f(A); A = f(B) per time step."""
        g, index = self.grid, list(AXES[: self.grid.dims])
        there, back = self.average("A", radius), self.average("B", radius)
        params = listed("int tsteps", g.extent_params(), g.param("A"), g.param("B"))
        start, end = self.timer()
        text = self.header(name, "void", params) + start + self.loop.head
        text += nest(g, radius, f"{g.at('B', index)} = {there};", "    ") + "\n"
        text += nest(g, radius, f"{g.at('A', index)} = {back};", "    ") + "\n"
        text += self.loop.tail + end + "}\n"
        return Kernel(name, text, f"{name}({listed(str(steps), g.extent_args(), 'A', 'B')});")

    def seidel(self, name: str, radius: int, steps: int) -> Kernel:
        """In place: every point reads neighbours already updated in this sweep."""
        g, index = self.grid, list(AXES[: self.grid.dims])
        value = self.average("A", radius)
        text = self.header(name, "void", listed("int tsteps", g.extent_params(), g.param("A")))
        text += self.loop.head + nest(g, radius, f"{g.at('A', index)} = {value};", "    ") + "\n"
        text += self.loop.tail + "}\n"
        return Kernel(name, text, f"{name}({listed(str(steps), g.extent_args(), 'A')});")

    def swap(self, name: str, radius: int, steps: int) -> Kernel:
        """One sweep per step and a pointer swap (pointer layout only); the pointers are
        locals, sometimes globals, sometimes members of local structs a static helper swaps
        (legacy code's grids)."""
        g, index = self.grid, list(AXES[: self.grid.dims])
        form = "global" if self.extras.random() < 0.4 else "local"
        if form == "local" and self.extras.random() < 0.35:
            form = "struct"
        a, b = {"global": (f"{name}_a", f"{name}_b"), "local": ("a", "b")}.get(
            form, ("ga.data", "gb.data")
        )
        value = self.average(a, radius)
        params = listed("int tsteps", g.extent_params(), g.param("A"), g.param("B"))
        start, end = self.timer()
        text = {"global": f"static {g.ctype} *{a}, *{b};\n", "local": ""}.get(
            form,
            f"typedef struct {{ int steps; {g.ctype} *data; }} {name}_grid;\n"
            f"static void {name}_flip({name}_grid *x, {name}_grid *y)\n"
            f"{{\n  {g.ctype} *t = x->data;\n  x->data = y->data;\n  y->data = t;\n}}\n",
        )
        text += self.header(name, "void", params)
        text += {
            "global": f"  {g.ctype} *tmp;\n  {a} = A;\n  {b} = B;\n",
            "local": f"  {g.ctype} *a = A, *b = B, *tmp;\n",
        }.get(form, f"  {name}_grid ga = {{0, A}}, gb = {{0, B}};\n")
        text += start + self.loop.head
        text += nest(g, radius, f"{g.at(b, index)} = {value};", "    ") + "\n"
        if form == "struct":
            text += f"    {name}_flip(&ga, &gb);\n"
        else:
            text += f"    tmp = {a}; {a} = {b}; {b} = tmp;\n"
        text += self.loop.tail + end + "}\n"
        return Kernel(name, text, f"{name}({listed(str(steps), g.extent_args(), 'A', 'B')});")

    def modulo(self, name: str, radius: int, steps: int) -> Kernel:
        """`P[(t+1)%2] = f(P[t%2])` over a two-plane array."""
        g, index = self.grid, list(AXES[: self.grid.dims])
        value = self.average("P", radius, "t % 2")
        params = listed("int tsteps", g.extent_params(), g.param("P", planes=2))
        text = self.header(name, "void", params) + self.loop.head
        text += nest(g, radius, f"{g.at('P', index, '(t + 1) % 2')} = {value};", "    ")
        text += "\n" + self.loop.tail + "}\n"
        return Kernel(name, text, f"{name}({listed(str(steps), g.extent_args(), 'P')});")

    def pipeline(self, name: str, radius: int, steps: int) -> Kernel:
        """Consecutive nests without a time loop: B = f(A); C = g(B); A = C - B."""
        g, index = self.grid, list(AXES[: self.grid.dims])
        blur, again = self.average("A", radius), self.average("B", 1)
        params = listed(g.extent_params(), g.param("A"), g.param("B"), g.param("C"))
        text = self.header(name, "void", params, timed=False)
        text += nest(g, radius, f"{g.at('B', index)} = {blur};", "  ") + "\n"
        text += nest(g, radius + 1, f"{g.at('C', index)} = {again};", "  ") + "\n"
        mix = f"({g.at('C', index)} + {g.at('B', index)}) / {g.literal(2)}"
        text += nest(g, radius + 1, f"{g.at('A', index)} = {mix};", "  ") + "\n}\n"
        return Kernel(name, text, f"{name}({listed(g.extent_args(), 'A', 'B', 'C')});")

    def reduction(self, name: str, radius: int, steps: int) -> Kernel:
        """A weighted sum over the interior, returned (the order of a float sum matters)."""
        g = self.grid
        result = "long long" if g.ctype == "int" else g.ctype
        index = list(AXES[: g.dims])
        text = self.header(name, result, listed(g.extent_params(), g.param("A")), timed=False)
        text += f"  {result} s = 0;\n"
        weight = self.rng.choice((1, 3))
        term = g.at("A", index) if weight == 1 else f"{g.literal(weight)} * {g.at('A', index)}"
        text += nest(g, radius, f"s += {term};", "  ") + "\n  return s;\n}\n"
        return Kernel(name, text, f"{name}({listed(g.extent_args(), 'A')})", returns=True)


#: the arrays main passes to the kernels, with their number of planes
ARRAYS = (("A", 1), ("B", 1), ("C", 1), ("P", 2))
FORMS = ("jacobi", "seidel", "swap", "modulo", "pipeline", "reduction")


def main_text(grid: Grid, kernels: list[Kernel], write_file: bool) -> str:
    """`main`: allocate and initialize, run the kernels, print checksums, exit from the data."""
    g = grid
    count = " * ".join(str(s) for s in g.sizes)
    lines = ["int main(void)", "{"]
    if g.layout == "pointer":
        for a, planes in ARRAYS:
            lines.append(f"  {g.ctype} *{a} = malloc(sizeof({g.ctype}) * {planes} * {count});")
    elif g.layout == "vla":
        for a, planes in ARRAYS:
            whole = (planes,) * (planes > 1) + g.sizes
            pointee = "".join(f"[{s}]" for s in whole[1:])
            shape = "".join(f"[{s}]" for s in whole)
            pointer = f"(*{a}){pointee}" if pointee else f"*{a}"
            lines.append(f"  {g.ctype} {pointer} = malloc(sizeof({g.ctype}{shape}));")
    if g.layout != "fixed":
        lines.append("  if (!A || !B || !C || !P) return 99;")
    size = f"sizeof({g.ctype}) * {count}"
    for seed, (a, planes) in enumerate(ARRAYS):
        lines.append(f"  init((void *){a}, {planes} * {count}, {seed + 1});")
    lines.append("  unsigned long long h = 1469598103934665603ULL;")
    for k in kernels:
        if k.returns:
            value = "%lld" if g.ctype == "int" else "%a"
            cast = "" if g.ctype == "int" else "(double)"
            lines.append(f'  printf("{k.name} {value}\\n", {cast}{k.call});')
        else:
            lines.append(f"  {k.call}")
    for a, planes in ARRAYS:
        length = f"{planes} * {size}"
        lines.append(f"  h = fnv(h, (const void *){a}, {length});")
        lines.append(f'  printf("{a} %016llx\\n", fnv(1469598103934665603ULL, {a}, {length}));')
    if write_file:
        lines += [
            '  FILE *out = fopen("result.bin", "wb");',
            "  if (!out) return 98;",
            f"  fwrite(A, 1, {size}, out);",
            "  fclose(out);",
        ]
    if g.layout != "fixed":
        lines += [f"  free({a});" for a, _ in ARRAYS]
    lines += ["  return (int)(h % 7);", "}"]
    return "\n".join(lines) + "\n"


def support_text(grid: Grid) -> str:
    """The includes, sizes, static arrays, `init` and the byte checksum `fnv`."""
    g = grid
    text = "#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n\n"
    if g.layout == "fixed":
        text += "".join(f"#define N{d} {s}\n" for d, s in enumerate(g.sizes)) + "\n"
        dims = "".join(f"[N{d}]" for d in range(g.dims))
        text += "".join(f"static {g.ctype} {a}{dims};\n" for a in "ABC")
        text += f"static {g.ctype} P[2]{dims};\n\n"
    value = "(i * 7 + seed * 13) % 101"
    scaled = value if g.ctype == "int" else f"({g.ctype})({value}) / 8"
    text += (
        f"static void init({g.ctype} *x, long n, int seed)\n{{\n"
        f"  for (long i = 0; i < n; i++)\n    x[i] = {scaled};\n}}\n\n"
        "static unsigned long long fnv(unsigned long long h, const void *p, unsigned long n)\n{\n"
        "  const unsigned char *b = p;\n"
        "  for (unsigned long i = 0; i < n; i++)\n"
        "    h = (h ^ b[i]) * 1099511628211ULL;\n"
        "  return h;\n}\n\n"
    )
    return text


def generate(seed: int) -> StencilProgram:
    """The program of `seed` (the same text for the same seed, on every machine)."""
    rng = random.Random(seed)
    dims = rng.choice((1, 2, 2, 3))
    grid = Grid(
        dims,
        tuple(rng.choice(SIZES[dims]) for _ in range(dims)),
        rng.choice(CTYPES),
        rng.choice(LAYOUTS),
    )
    writer = Writer(rng, grid, random.Random(-seed), random.Random(f"extras {seed}"))
    forms = [f for f in FORMS if f != "swap" or grid.layout == "pointer"]
    kernels = []
    for n in range(rng.randint(1, 3)):
        form = rng.choice(forms)
        radius = rng.choice((1, 1, 2)) if dims < 3 or form != "pipeline" else 1
        kernels.append(getattr(writer, form)(f"{form}_{n}", radius, rng.choice(STEPS)))
    source = support_text(grid) + "\n".join(k.text for k in kernels) + "\n"
    source += main_text(grid, kernels, write_file=rng.random() < 0.3)
    return StencilProgram(
        f"stencil-{seed}",
        source,
        rng.choice(STANDARDS) + ("-Wall",),
        tuple(k.name for k in kernels),
    )


if __name__ == "__main__":
    import sys

    print(generate(int(sys.argv[1])).source, end="")
