"""fdakpl: nonlinear function-on-function regression by kernel-based projection learning.

Implements KPL from Bouche, Clausel, Roueff and d'Alché-Buc, "Nonlinear
Functional Output Regression: A Dictionary Approach" (AISTATS 2021).

The top level holds what a user of the front end writes (the model, its results, the
estimators, kernels, dictionaries and losses one names in a call, ``save`` and ``load``);
building blocks that are advanced or ambiguous live in their namespace: output matrices in
:mod:`fdakpl.kernels` (``Identity``, ``Matrix``, ``ScaleDecay``), ``Learned``,
``RandomFourier`` and ``make_dictionary`` in :mod:`fdakpl.dictionaries`, ``CustomLoss`` and
``make_loss`` in :mod:`fdakpl.losses`.

Examples
--------
>>> import fdakpl
>>> isinstance(fdakpl.__version__, str)
True
"""

from . import baselines, datasets, dictionaries, kernels, losses, solvers
from ._version import __version__
from .diagnostics.bounds import excess_risk_bound
from .dictionaries import FPCA, BSpline, Fourier, PiecewiseLinear, Wavelet
from .estimators.approx import ApproxKPLRegressor, Nystroem, RandomFourierFeatures
from .estimators.kpl import KPLRegressor
from .factor_kernels import Categorical
from .io.persist import load, save
from .kernels import Gaussian, IntegralGaussian, Laplace, Linear, Product, SmoothedLinear, Sum
from .losses import Huber, LogCosh, PseudoHuber, Square
from .regression.model import FunctionalRegression
from .results.core import FunctionalRegressionResults
from .roughness_kernels import PenalizedLinear

__all__ = [
    "FPCA",
    "ApproxKPLRegressor",
    "BSpline",
    "Categorical",
    "Fourier",
    "FunctionalRegression",
    "FunctionalRegressionResults",
    "Gaussian",
    "Huber",
    "IntegralGaussian",
    "KPLRegressor",
    "Laplace",
    "Linear",
    "LogCosh",
    "Nystroem",
    "PenalizedLinear",
    "PiecewiseLinear",
    "Product",
    "PseudoHuber",
    "RandomFourierFeatures",
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
    "save",
    "solvers",
]
