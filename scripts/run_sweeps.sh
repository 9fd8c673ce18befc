#!/usr/bin/env bash
# The opt-in sweeps of the test suite (`@pytest.mark.sweep`, left out of the default run by
# pyproject's addopts; docs/testing.md lists them and what each costs): run them all, on every
# core, with the venv of the checkout (`.venv`, made by `.ci/run`). Extra arguments go to
# pytest, e.g. `scripts/run_sweeps.sh -k overlap`.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"
exec "$python" -m pytest -q -n auto -m sweep "$@"
