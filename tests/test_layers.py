"""The layering of docs/architecture.md holds: every import points down (imports inside
functions count too), and there is no import cycle.

    ground floor   diagnostics, c_library, ir_passes.core  (IR utilities and analyses; imports
                   nothing above)
    front end      frontend                     (ground floor only)
    polyhedral     polyhedral                   (ground floor only)
    passes         ir_passes                    (ground floor, polyhedral)
    back ends      emit                         (everything above this line)
    harness        runtime                      (everything above this line)
    application    the package's own modules: cli, launcher, dropin*, tune_report
"""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".git", ".venv", "tests", "scripts", "build", "docs", "__pycache__"}

#: layer -> (module prefixes, layers it may import besides itself)
LAYERS: dict[str, tuple[tuple[str, ...], set[str]]] = {
    "ground floor": (("diagnostics", "c_library", "ir_passes.core"), set()),
    "front end": (("frontend",), {"ground floor"}),
    "polyhedral": (("polyhedral",), {"ground floor"}),
    "passes": (("ir_passes",), {"ground floor", "polyhedral"}),
    "back ends": (("emit",), {"ground floor", "front end", "polyhedral", "passes"}),
    "harness": (("runtime",), {"ground floor", "front end", "polyhedral", "passes", "back ends"}),
}
APPLICATION = "application"


def layer_of(module: str) -> str:
    """The layer of `pycc_stencil.<module>`: the longest matching prefix wins."""
    best, length = APPLICATION, -1
    for layer, (prefixes, _) in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = layer, len(prefix)
    return best


def modules() -> dict[str, Path]:
    """The package's modules, by name (the skipped directories, a venv's thousands of files
    among them, not even walked)."""
    found = {}
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [
            d for d in subdirectories if d not in SKIP and not d.endswith(".egg-info")
        ]
        for file in files:
            if file.endswith(".py"):
                relative = (Path(directory) / file).relative_to(ROOT)
                name = ".".join(relative.with_suffix("").parts)
                found[name.removesuffix(".__init__").removesuffix("__init__")] = ROOT / relative
    return found


def imported(module: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported project module, line) for every import in the file, at any depth."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    package = [p for p in package if p]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("pycc_stencil"):
                target = node.module.removeprefix("pycc_stencil").lstrip(".")
            else:
                continue
            names = [target] + [f"{target}.{a.name}".lstrip(".") for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name.removeprefix("pycc_stencil").lstrip(".") for a in node.names]
            names = [n for n, a in zip(names, node.names) if a.name.startswith("pycc_stencil")]
        else:
            continue
        # a package's own __init__ importing its parts is not a cycle
        found += [
            (n, node.lineno)
            for n in names
            if n in known and n != module and not (n and module.startswith(n + "."))
        ]
    return found


def graph() -> dict[str, list[tuple[str, int]]]:
    known = modules()
    return {m: imported(m, p, known) for m, p in known.items()}


def test_every_module_has_a_layer_and_the_ground_floor_exists():
    layers = {layer_of(m) for m in modules()}
    assert layers == set(LAYERS) | {APPLICATION}


def test_every_import_points_down():
    upward = []
    for module, targets in graph().items():
        mine = layer_of(module)
        if mine == APPLICATION:
            continue
        allowed = LAYERS[mine][1] | {mine}
        for target, line in targets:
            if layer_of(target) not in allowed:
                upward.append(f"{module}:{line} ({mine}) imports {target} ({layer_of(target)})")
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    edges = {m: {t for t, _ in targets} for m, targets in graph().items()}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])


def test_the_layer_check_sees_an_upward_import(tmp_path):
    """The checker itself: a ground-floor file importing a pass is reported."""
    path = tmp_path / "bad.py"
    path.write_text("from ..pipeline import run_passes\n")
    known = {"ir_passes.core.bad": path, "ir_passes.pipeline": path}
    targets = imported("ir_passes.core.bad", path, known)
    assert targets == [("ir_passes.pipeline", 1)]
    assert layer_of("ir_passes.core.bad") == "ground floor"
    assert layer_of("ir_passes.pipeline") == "passes"


def test_every_package_is_in_the_wheel():
    """setup.py finds the wheel's packages (the repository root is the package, so
    setuptools' discovery needs the `pycc_stencil.` prefix added): every folder with Python
    files is one of them. A hand-kept list once missed polyhedral.schedule; a folder without
    an `__init__.py` would be missed too. tests/test_packaging.py builds and runs the wheel."""
    spec = importlib.util.spec_from_file_location("pycc_stencil_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    folders = {path.parent for path in modules().values() if path.parent != ROOT}
    expected = {
        "pycc_stencil",
        *(f"pycc_stencil.{'.'.join(f.relative_to(ROOT).parts)}" for f in folders),
    }
    assert set(setup.packages()) == expected
