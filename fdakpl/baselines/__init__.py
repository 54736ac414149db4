"""The paper's competitors, under the estimator API of :class:`~fdakpl.KPLRegressor`.

=============================  =====  ===========================================================
class                          name   reference
=============================  =====  ===========================================================
:class:`KernelEstimator`       KE     functional Nadaraya--Watson (Ferraty et al., 2011)
:class:`TripleBasisEstimator`  3BE    triple basis estimator (Oliva, Neiswanger, Póczos et al., 2015)
:class:`OneBasisEstimator`     1BE    3BE with a kernel on the inputs (= plug-in KPL, B = I)
:class:`FunctionalKRR`         FKRR   functional kernel ridge regression (Kadri et al., 2010, 2016)
:class:`KernelAdditiveModel`   KAM    kernel additive model ("Barath et al., 2017")
=============================  =====  ===========================================================

All take ``fit(X, Y, locations=None)`` with arrays, functional DataArrays
(NaN = unobserved) or long DataFrames as responses, and ``predict(X, at=None)``.

Examples
--------
>>> import numpy as np
>>> from fdakpl.baselines import FunctionalKRR, KernelEstimator
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, size=(20, 2)); Y = np.sin(np.pi * X[:, :1] * np.linspace(0, 1, 10))
>>> [m.fit(X, Y).predict(X[:1]).shape for m in (KernelEstimator(0.5), FunctionalKRR())]
[(1, 10), (1, 10)]
"""

from ..kernels import squared_distances
from ._base import FunctionalBaseline, curve_inputs, responses_on_grid
from .basis import OneBasisEstimator, TripleBasisEstimator, basis_coefficients, random_fourier_features
from .fkrr import FunctionalKRR, fkrr_system
from .kam import KernelAdditiveModel, kam_input_gram, kam_output_gram
from .ke import KernelEstimator, nadaraya_watson

__all__ = [
    "FunctionalBaseline",
    "FunctionalKRR",
    "KernelAdditiveModel",
    "KernelEstimator",
    "OneBasisEstimator",
    "TripleBasisEstimator",
    "basis_coefficients",
    "curve_inputs",
    "fkrr_system",
    "kam_input_gram",
    "kam_output_gram",
    "nadaraya_watson",
    "random_fourier_features",
    "responses_on_grid",
    "squared_distances",
]
