"""fdakpl: nonlinear function-on-function regression by kernel-based projection learning.

Implements KPL from Bouche, Clausel, Roueff and d'Alché-Buc, "Nonlinear
Functional Output Regression: A Dictionary Approach" (AISTATS 2021).

Examples
--------
>>> import fdakpl
>>> isinstance(fdakpl.__version__, str)
True
"""

from importlib.metadata import PackageNotFoundError, version

from . import baselines, datasets, dictionaries, functional, kernels, solvers
from .dictionaries import FPCA, BSpline, Fourier, Learned, PiecewiseLinear, RandomFourier, Wavelet, make_dictionary
from .estimator import KPLRegressor
from .kernels import Gaussian, Identity, IntegralGaussian, Laplace, Linear, Matrix, Product, ScaleDecay, Sum

try:
    __version__ = version("fdakpl")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "FPCA",
    "BSpline",
    "Fourier",
    "Gaussian",
    "Identity",
    "IntegralGaussian",
    "KPLRegressor",
    "Laplace",
    "Learned",
    "Linear",
    "Matrix",
    "PiecewiseLinear",
    "Product",
    "RandomFourier",
    "ScaleDecay",
    "Sum",
    "Wavelet",
    "__version__",
    "baselines",
    "datasets",
    "dictionaries",
    "functional",
    "kernels",
    "make_dictionary",
    "solvers",
]
