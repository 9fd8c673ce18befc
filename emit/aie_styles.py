"""How an AI Engine kernel's statements are spelled: with the AIE1 intrinsics (`mac16`,
`lmac8`, `fpmac`, `srs`, `upd_w`: what Vyasa emits) or with the AI Engine API (`aie::vector`,
`aie::accum`, `aie::sliding_mul_ops`, `aie::load_v`: what AMD's newer examples use). The plan
(`aie_kernel`) is the same; only the spelling differs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MacRun:
    """MACs of one accumulator on consecutive weights: `points` taps (padding included) from
    `start` in `register`, `step` elements apart, and from `zstart` in W`z`; the intrinsic
    style writes its `arguments`, one intrinsic each."""

    register: str  # X<load>, or Y<load>_<load> for two registers read as one
    acc: int  # the accumulator (output vector of the iteration)
    z: int
    start: int
    zstart: int
    points: int
    arguments: tuple[str, ...]
    step: int = 1  # elements between the data of consecutive points


class IntrinsicStyle:
    name = "intrinsics"
    header = "pycc_aie.h"

    def accumulator(self, path, acc: int, at: str, accumulates: bool) -> list[str]:
        out = path.vector(path.lanes)
        if not path.accumulator:
            first = f"PYCC_AIE_LOAD({out}, {at})" if accumulates else "null_v8float()"
            return [f"{out} acc{acc} = {first};"]
        old = f"ups(PYCC_AIE_LOAD({out}, {at}), 0)"
        first = old if accumulates else f"null_{path.accumulator}()"
        return [f"{path.accumulator} acc{acc} = {first};"]

    def register(self, path, k: int, elements: int) -> str:
        register = path.vector(elements)
        return f"{register} X{k} = undef_{register}();"

    def part(self, path, k: int, index: int, elements: int, address: str) -> str:
        update = "upd_w" if elements * path.bytes == 32 else "upd_v"
        return f"X{k} = {update}(X{k}, {index}, PYCC_AIE_LOAD({path.vector(elements)}, {address}));"

    def weights(self, path, register: int, start: int) -> str:
        z = path.vector(path.z_elements)
        return f"const {z} W{register} = PYCC_AIE_LOAD({z}, pycc_w + {start});"

    def mac(self, path, run: MacRun, first: bool = False) -> list[str]:
        """The run's intrinsics; with `first`, the first one starts the accumulator (fpmul:
        C's float sum starts with its first product)."""
        name = "fpmac" if not path.accumulator else "mac16" if path.columns == 2 else "lmac8"
        acc = f"acc{run.acc}"
        lines = [f"{acc} = {name}({acc}, {run.register}, {a});" for a in run.arguments]
        if first:
            lines[0] = f"{acc} = fpmul({run.register}, {run.arguments[0]});"
        return lines

    def pair(self, path, first: int, second: int) -> str:
        """Two 512-bit registers read as one of 1024 bits."""
        return f"{path.vector(64)} Y{first}_{second} = concat(X{first}, X{second});"

    def store(self, path, acc: int, at: str) -> str:
        result = f"acc{acc}" if not path.accumulator else f"srs(acc{acc}, 0)"
        return f"PYCC_AIE_STORE({path.vector(path.lanes)}, {at}, {result});"


#: the AI Engine API's accumulator tag of each datapath
_TAGS = {"int16_t": "acc48", "int32_t": "acc80", "float": "accfloat"}


class ApiStyle:
    name = "api"
    header = "pycc_aie_api.h"

    def _types(self, path) -> tuple[str, str]:
        return path.element, f"aie::accum<{_TAGS[path.element]}, {path.lanes}>"

    def accumulator(self, path, acc: int, at: str, accumulates: bool) -> list[str]:
        element, accum = self._types(path)
        if not accumulates:
            return [f"{accum} acc{acc} = aie::zeros<{_TAGS[element]}, {path.lanes}>();"]
        old = f"aie::load_v<{path.lanes}>(({element} *)({at}))"
        return [f"{accum} acc{acc};", f"acc{acc}.from_vector({old}, 0);"]

    def register(self, path, k: int, elements: int) -> str:
        return f"aie::vector<{path.element}, {elements}> X{k};"

    def part(self, path, k: int, index: int, elements: int, address: str) -> str:
        return f"X{k}.insert({index}, aie::load_v<{elements}>(({path.element} *)({address})));"

    def weights(self, path, register: int, start: int) -> str:
        z = f"aie::vector<{path.element}, {path.z_elements}>"
        return f"const {z} W{register} = aie::load_v<{path.z_elements}>(pycc_w + {start});"

    def mac(self, path, run: MacRun, first: bool = False) -> list[str]:
        """One sliding multiplication; with `first`, `mul` starts the accumulator."""
        element, _ = self._types(path)
        ops = (
            f"aie::sliding_mul_ops<{path.lanes}, {run.points}, 1, {run.step}, 1, {element}, "
            f"{element}, {_TAGS[element]}>"
        )
        acc = f"acc{run.acc}"
        operands = f"W{run.z}, {run.zstart}, {run.register}, {run.start}"
        if first:
            return [f"{acc} = {ops}::mul({operands});"]
        return [f"{acc} = {ops}::mac({acc}, {operands});"]

    def pair(self, path, first: int, second: int) -> str:
        pair = f"aie::concat(X{first}, X{second})"
        return f"aie::vector<{path.element}, 64> Y{first}_{second} = {pair};"

    def store(self, path, acc: int, at: str) -> str:
        shift = "" if not path.accumulator else "0"
        value = f"acc{acc}.template to_vector<{path.element}>({shift})"
        return f"aie::store_v(({path.element} *)({at}), {value});"


STYLES = {style.name: style for style in (IntrinsicStyle(), ApiStyle())}
