"""Hypothesis strategies for testing kernels with the `pycc` fixture (pytest_plugin.py): the
problem sizes a transformation is most likely to get wrong, drawn often, among all others.

    from hypothesis import given, settings
    from pycc_stencil.testing import sizes

    @settings(max_examples=20, deadline=None)
    @given(n=sizes(least=3, most=300, tile=32, vector=8))
    def test_blur_at_any_size(pycc, n):
        pycc.check("blur.c", function="blur", params={"n": n}, passes="tile(32)")

Needs hypothesis (`pip install pycc-stencil[testing]`).
"""

from __future__ import annotations

from hypothesis import strategies as st

#: primes a size is drawn among (a remainder loop's worst case: no factor divides them)
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 61, 67, 97, 127, 131, 251, 257, 509, 521)


def edge_sizes(least: int, most: int, *blocks: int | None) -> list[int]:
    """The sizes at the edges of each block (a tile, a vector, an unroll factor): one short
    of it, it, one past it, half of it, one short and past twice it; the least and the
    most; odd primes. Sorted, within [least, most]."""
    edges = {least, least + 1, most, most - 1}
    for block in filter(None, blocks):
        edges |= {block // 2, block - 1, block, block + 1, 2 * block - 1, 2 * block + 1}
    edges |= set(PRIMES)
    return sorted(e for e in edges if least <= e <= most)


def sizes(
    least: int = 1, most: int = 200, tile: int | None = None, vector: int | None = None
) -> st.SearchStrategy[int]:
    """A problem size in [least, most]: half the time an edge (`edge_sizes`: smaller than a
    tile or a vector, one past them, primes), else an odd size, else any."""
    if least > most:
        raise ValueError(f"sizes({least}, {most}): least is more than most")
    odd = st.integers(least, most).map(lambda n: n | 1).filter(lambda n: n <= most)
    return st.one_of(
        st.sampled_from(edge_sizes(least, most, tile, vector)),
        odd,
        st.integers(least, most),
    )


def params(**strategies: st.SearchStrategy) -> st.SearchStrategy[dict[str, str]]:
    """The `params` of `pycc.check` (scalar parameters as text, like `--param`) drawn from a
    strategy per parameter: `params(n=sizes(tile=32), alpha=st.floats(0, 1))`."""
    return st.fixed_dictionaries({name: s.map(str) for name, s in strategies.items()})
