"""`reference.build_library`: a C file built by any compiler command, its kernels called like
the reference's (`check.call_isolated`), `static` ones through an exporting copy."""

from __future__ import annotations

import numpy as np
import pytest
from pycc_stencil.frontend import lower_file
from pycc_stencil.runtime.buffers import BufferSpec, make_inputs
from pycc_stencil.runtime.check import call_isolated
from pycc_stencil.runtime.reference import PREFIX, ReferenceBuildError, build_library

SOURCE = """\
#include "scale.h"

static void scale(int n, const float *src, float *dst)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[i] * SCALE;
}

double total(int n, const float *src)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += src[i];
    return sum;
}
"""


@pytest.fixture
def kernel_file(tmp_path):
    directory = tmp_path / "src"
    directory.mkdir()
    (directory / "scale.h").write_text("#define SCALE 3.0f\n")
    path = directory / "kernels.c"
    path.write_text(SOURCE)
    return path


def test_external_and_static_functions_are_called(kernel_file, tmp_path):
    lowered = lower_file(str(kernel_file), ["-std=c99"])
    functions = [lowered.functions["scale"], lowered.functions["total"]]
    library = build_library(["cc", "-O1"], kernel_file, ["-std=c99"], functions, tmp_path / "b")
    assert library.source != kernel_file  # `scale` is static: a copy with wrappers is built
    assert library.source.read_text().startswith(SOURCE)
    assert f"{PREFIX}scale(" in library.source.read_text()
    specs = [
        BufferSpec("src", np.dtype(np.float32), 0, 7, read=True),
        BufferSpec("dst", np.dtype(np.float32), 0, 7, read=False),
    ]
    buffers = make_inputs(specs, seed=0)
    args = {"n": 7}
    call_isolated(library.function("scale"), functions[0], args, buffers, 10.0)
    assert np.array_equal(buffers.data("dst"), buffers.data("src") * np.float32(3.0))
    result = call_isolated(library.function("total"), functions[1], args, buffers, 10.0)
    assert result == sum(float(x) for x in buffers.data("src"))


def test_only_external_functions_build_the_file_itself(kernel_file, tmp_path):
    lowered = lower_file(str(kernel_file), ["-std=c99"])
    library = build_library(
        ["cc"], kernel_file, ["-std=c99"], [lowered.functions["total"]], tmp_path / "b"
    )
    assert library.source == kernel_file
    assert library.path.parent == tmp_path / "b"


def test_a_failing_build_carries_the_compiler_message(kernel_file, tmp_path):
    lowered = lower_file(str(kernel_file), ["-std=c99"])
    command = ["cc", "-include", "no-such-header.h"]
    with pytest.raises(ReferenceBuildError, match=r"failed \(status 1\): .*no-such-header\.h"):
        build_library(command, kernel_file, [], [lowered.functions["total"]], tmp_path / "b")
