import os

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
os.environ.setdefault("FDAKPL_PROGRESS", "0")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def make_problem(rng, n=30, m=40, p=3, missing=0.0):
    """Small nonlinear function-on-vector problem on a grid of [0, 1]."""
    X = rng.uniform(-1, 1, size=(n, p))
    grid = np.linspace(0, 1, m)
    Y = (np.sin(np.pi * np.outer(X[:, 0], grid)) + X[:, [1]] ** 2 * np.cos(2 * np.pi * grid)
         + 0.05 * rng.normal(size=(n, m)))
    if missing:
        mask = rng.uniform(size=Y.shape) < missing
        mask[:, 0] = False  # every curve keeps a point
        Y[mask] = np.nan
    return X, Y, grid


_LD = os.environ.get("LD_LIBRARY_PATH")


@pytest.fixture(autouse=True)
def _restore_ld_library_path():
    """Tests that start R through rpy2 must not leak R's LD_LIBRARY_PATH into later subprocesses.

    Restored before each test too: importing rpy2 while collecting (test modules, doctests) sets it, and with
    Debian's libpython on that path a subprocess ``python -m sphinx`` loads the wrong libpython.
    """

    def restore() -> None:
        if _LD is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = _LD

    restore()
    yield
    restore()
