"""Run the doctests of the geometry (and adjudicator) modules: small worked examples with round numbers."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import adjudicator
import geometry

MODULES = sorted(
    f"{pkg.__name__}.{m.name}" for pkg in (geometry, adjudicator) for m in pkgutil.iter_modules(pkg.__path__)
)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def test_geometry_has_doctests():
    total = sum(
        doctest.testmod(importlib.import_module(n)).attempted for n in MODULES if n.startswith("geometry")
    )
    assert total >= 8
