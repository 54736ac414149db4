"""fdakpl: nonlinear function-on-function regression by kernel-based projection learning.

Implements KPL from Bouche, Clausel, Roueff and d'Alché-Buc, "Nonlinear
Functional Output Regression: A Dictionary Approach" (AISTATS 2021).

Examples
--------
>>> import fdakpl
>>> isinstance(fdakpl.__version__, str)
True
"""

from . import baselines, datasets, dictionaries, kernels, losses, solvers
from ._version import __version__
from .diagnostics import excess_risk_bound
from .dictionaries import FPCA, BSpline, Fourier, Learned, PiecewiseLinear, RandomFourier, Wavelet, make_dictionary
from .estimators.approx import ApproxKPLRegressor, Nystroem, RandomFourierFeatures
from .estimators.kpl import KPLRegressor
from .io.netcdf import load
from .kernels import (
    Gaussian,
    Identity,
    IntegralGaussian,
    Laplace,
    Linear,
    Matrix,
    Product,
    ScaleDecay,
    SmoothedLinear,
    Sum,
)
from .losses import CustomLoss, Huber, LogCosh, PseudoHuber, Square, make_loss
from .regression import FunctionalRegression
from .results.core import FunctionalRegressionResults

__all__ = [
    "FPCA",
    "ApproxKPLRegressor",
    "BSpline",
    "CustomLoss",
    "Fourier",
    "FunctionalRegression",
    "FunctionalRegressionResults",
    "Gaussian",
    "Huber",
    "Identity",
    "IntegralGaussian",
    "KPLRegressor",
    "Laplace",
    "Learned",
    "Linear",
    "LogCosh",
    "Matrix",
    "Nystroem",
    "PiecewiseLinear",
    "Product",
    "PseudoHuber",
    "RandomFourier",
    "RandomFourierFeatures",
    "ScaleDecay",
    "SmoothedLinear",
    "Square",
    "Sum",
    "Wavelet",
    "__version__",
    "baselines",
    "datasets",
    "dictionaries",
    "excess_risk_bound",
    "kernels",
    "load",
    "losses",
    "make_dictionary",
    "make_loss",
    "solvers",
]
