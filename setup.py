"""The wheel's packages, found rather than listed: the repository root is the `pycc_stencil`
package (pyproject.toml's `package-dir`), so every folder below it with an `__init__.py` is
`pycc_stencil.<folder>`, and a new subpackage ships without a list to edit (a hand-kept list
once left out `polyhedral.schedule`: every compile of `pip install .` then failed).
Everything else is in pyproject.toml."""

import os

from setuptools import find_packages, setup

#: folders of the repository that are not part of the package
NOT_SHIPPED = ["tests", "tests.*", "scripts", "scripts.*", "build", "build.*", "docs", "docs.*"]


def packages() -> list[str]:
    found = find_packages(os.path.dirname(os.path.abspath(__file__)), exclude=NOT_SHIPPED)
    return ["pycc_stencil", *(f"pycc_stencil.{name}" for name in found)]


if __name__ == "__main__":
    # script_name: distutils leaves the setup script out of the package it sits in only when
    # it knows the script's path (here the package's own folder)
    setup(packages=packages(), script_name=os.path.relpath(__file__))
