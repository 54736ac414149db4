"""Kernels on factors (categorical covariates): :class:`Categorical`; on subject labels: :class:`RandomEffect`.

A factor with levels ``1 .. L`` enters a kernel through its *indicator rows*: the
row of a sample has a 1 in the column of its level and 0 elsewhere.
``Categorical(sigma)`` is the Gaussian kernel on these rows,

.. math::

    k(a, b) = \\exp\\left(-\\frac{\\lVert e_a - e_b \\rVert^2}{2\\sigma^2}\\right)
            = \\begin{cases} 1 & a = b \\\\ \\rho = e^{-1/\\sigma^2} & a \\ne b, \\end{cases}

so every level is equally far from every other one. The kernel does not depend on
the names of the levels, on their order, nor on a reference level (there is none: no
column is dropped), and each factor is one kernel however many levels it has.
Equivalently ``k = rho + (1 - rho) [a == b]``: an effect shared by all levels plus an
independent effect per level, ``rho`` (:attr:`Categorical.correlation`) being the
correlation between two levels (``sigma -> 0``: levels unrelated; ``sigma -> inf``:
the factor is ignored).

How a formula maps to these kernels (:mod:`fdakpl.formula.terms`): every term made only
of factors (``C(g)``, a text variable ``g``, an interaction ``C(a):C(b)``) is one kernel
term, named by the term's text (``"C(g)"``, ``"C(a):C(b)"``); its input is the
indicator matrix of the term's cells (for an interaction, one column per combination of
levels: a cell is equally far from every other cell). Its default width is the median
heuristic of these rows, ``sqrt(2)`` (``rho = exp(-1/2)``), and
:class:`~fdakpl.regression.model.FunctionalRegression` tunes multiples of it with the
other terms' widths. Terms with a numeric factor (``age``, ``np.log(dose)``,
``age:C(sex)``) share the Gaussian kernel named ``"scalars"``, on standardised columns in
which a factor is coded by all its levels. Per-term kernels combine with the curve terms
by ``combine=`` (product by default). Give a factor term its own kernel by its name, e.g.
``kernels={"C(sex)": Categorical(1.0)}``.

At the array level the input of a :class:`Categorical` kernel is the ``(n, L)`` indicator
matrix (rows with a single 1); :func:`indicators` builds it from level codes. A combination
of levels that no training sample had (a cell of an interaction) has its own column, so it is
at correlation ``rho`` from every training cell.

Examples
--------
>>> import numpy as np
>>> X = indicators(np.array([0, 1, 2, 0]), 3)
>>> np.round(Categorical(1.0)(X), 4)
array([[1.    , 0.3679, 0.3679, 1.    ],
       [0.3679, 1.    , 0.3679, 0.3679],
       [0.3679, 0.3679, 1.    , 0.3679],
       [1.    , 0.3679, 0.3679, 1.    ]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .kernels import Gaussian, Kernel
from .utils.saved import saved

__all__ = ["Categorical", "RandomEffect", "indicators"]


def indicators(codes: Any, n_levels: int) -> np.ndarray:
    """Indicator rows ``(n, n_levels)`` of integer level codes (from 0 to ``n_levels - 1``).

    Examples
    --------
    >>> indicators([1, 0, 1], 2)
    array([[0., 1.],
           [1., 0.],
           [0., 1.]])
    """
    codes = np.asarray(codes, dtype=np.intp)
    if codes.ndim != 1 or (codes.size and (codes.min() < 0 or codes.max() >= n_levels)):
        raise ValueError(f"level codes must be a 1-d array of integers in [0, {n_levels - 1}]")
    out = np.zeros((codes.size, int(n_levels)))
    out[np.arange(codes.size), codes] = 1.0
    return out


@saved()  # sigma, declared by Gaussian
class Categorical(Gaussian):
    """Kernel on a factor: ``1`` for equal levels, ``rho = exp(-1 / sigma^2)`` for different ones.

    The Gaussian kernel on indicator rows (see the module's description): invariant to the names,
    the order and the coding of the levels. Its input is an ``(n, L)`` matrix of indicator rows
    (:func:`indicators`); anything else is refused.

    Parameters
    ----------
    sigma : float
        Width, > 0; the correlation between two different levels is ``exp(-1 / sigma^2)``.

    Examples
    --------
    >>> k = Categorical(2.0)
    >>> float(k(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))[0, 0]) == float(np.exp(-0.25)) == k.correlation
    True
    """

    @property
    def correlation(self) -> float:
        """``rho = exp(-1 / sigma^2)``, the kernel between two different levels."""
        return float(np.exp(-1.0 / self.sigma ** 2))

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        for name, A in (("X", X), ("Y", Y)) if Y is not X else (("X", X),):
            if not (np.all((A == 0.0) | (A == 1.0)) and np.all(A.sum(axis=1) == 1.0)):
                raise ValueError(f"the Categorical kernel takes indicator rows (one 1 per row, in the column of "
                                 f"the level); {name} has other values: build it with "
                                 "fdakpl.factor_kernels.indicators(codes, n_levels)")
        if w is not None:
            raise ValueError("the Categorical kernel takes indicator rows without quadrature weights")
        return super()._matrix(X, Y, None)

    _matrix.pairs_once = True  # type: ignore[attr-defined]  # Gaussian's pdist matrix: exactly symmetric


@saved("weight")
class RandomEffect(Kernel):
    """Kernel of a subject effect (a functional random intercept): ``w`` for curves of one subject, 0 otherwise.

    The formula term ``re(ID)`` (:mod:`fdakpl.formula.terms`). Its input is the ``(n, L)`` matrix of indicator rows
    of the subjects seen when fitting; a subject not seen then has a row of zeros, so its kernel with every training
    curve is 0. The kernel is :attr:`~fdakpl.kernels.Kernel.additive`: a :class:`~fdakpl.kernels.Product` (or
    :class:`~fdakpl.kernels.Sum`) of terms *adds* it, ``K = K_rest + w K_subject``, so the fitted function is the
    population part (the other terms) plus one effect curve per subject, ``h = h_rest + u_subject``, shrunk by the
    ridge as a random effect is by its variance (``w`` plays the role of the random-effect variance relative to
    the other terms). Renaming or reordering the subjects changes nothing (``K_subject = Z Z^T``).

    Parameters
    ----------
    weight : float
        ``w >= 0`` (0: no subject effect).

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])  # the last curve: a new subject
    >>> RandomEffect(0.5)(Z)
    array([[0.5, 0. , 0.5, 0. ],
           [0. , 0.5, 0. , 0. ],
           [0.5, 0. , 0.5, 0. ],
           [0. , 0. , 0. , 0. ]])
    """

    additive = True

    def __init__(self, weight: float = 1.0) -> None:
        if not np.isfinite(weight) or weight < 0:
            raise ValueError(f"RandomEffect kernel: weight must be >= 0, got {weight}")
        self.weight = float(weight)

    def _matrix(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        for name, A in (("X", X), ("Y", Y)) if Y is not X else (("X", X),):
            if not (np.all((A == 0.0) | (A == 1.0)) and np.all(A.sum(axis=1) <= 1.0)):
                raise ValueError(f"the RandomEffect kernel takes indicator rows of the subjects (one 1 per row, in "
                                 f"the column of the subject; a row of zeros for a new subject); {name} has other "
                                 "values: build it with fdakpl.factor_kernels.indicators(codes, n_subjects)")
        if w is not None:
            raise ValueError("the RandomEffect kernel takes indicator rows without quadrature weights")
        return self.weight * (X @ Y.T)  # sums of products of 0 and 1: exact, so exactly symmetric

    _matrix.pairs_once = True  # type: ignore[attr-defined]

    def diagonal_bound(self) -> float:
        return self.weight
