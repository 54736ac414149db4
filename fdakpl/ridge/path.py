"""``RidgePath``: the closed-form KPL ridge of one problem, one kernel and one ``B``, at every lambda.

One pair of eigendecompositions (``K = U diag(s) U^T``, ``B^{1/2} G B^{1/2} = V diag(e) V^T``; see
:mod:`fdakpl.solvers.closed_form`) gives the representer coefficients at any lambda, and the per-curve
quadratic forms of :mod:`fdakpl.ridge.quadratics` give the training error, the effective degrees of
freedom, GCV and the exact leave-one-curve-out (or leave-one-group-out) error along any lambda grid,
without refitting and without touching the observed points again.

Examples
--------
>>> import numpy as np
>>> from fdakpl.kernels import Gaussian
>>> from fdakpl.ridge.problem import prepare_problem
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(30, 1)); grid = np.linspace(0, 1, 20)
>>> Y = np.sin(np.outer(X[:, 0], grid)) + 0.1 * rng.normal(size=(30, 20))
>>> problem = prepare_problem(X, Y, grid, dictionary="fourier")
>>> path = RidgePath.fit(problem, Gaussian(1.0), *problem.output_matrix(None))
>>> crit = path.criteria(np.geomspace(1e-6, 1, 7))
>>> crit.best("loo")[0] in range(7)
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.validation import check_grid
from ..kernels import Kernel
from ..solvers.closed_form import RidgeDecomposition, decompose, ridge_coef, sym_sqrt
from ..utils.saved import saved
from .problem import KPLProblem
from .quadratics import PathErrors, RotatedQuadratics, group_indices, group_loo_errors, path_errors

__all__ = ["PathCriteria", "RidgePath"]


@saved("lams", "train_mse", "edf", "gcv", "loo", "group_loo", "n_points", defaults={"group_loo": None})
@dataclass(frozen=True)
class PathCriteria:
    """Criteria along a lambda path (arrays aligned with ``lams``), in the responses' units.

    Attributes
    ----------
    lams : numpy.ndarray
    train_mse : numpy.ndarray
        Weighted training error ``1/n sum_i sum_p c_ip r_ip^2``.
    edf : numpy.ndarray
        Effective degrees of freedom (trace of the smoother).
    gcv : numpy.ndarray
        ``train_mse / (1 - edf / N)^2`` with ``N`` observed points (``inf`` where ``edf >= N``).
    loo : numpy.ndarray
        Exact leave-one-curve-out error, same weighting as ``train_mse``.
    group_loo : numpy.ndarray or None
        Exact leave-one-group-out error, when groups were given.
    n_points : int
        ``N``.
    """

    lams: np.ndarray
    train_mse: np.ndarray
    edf: np.ndarray
    gcv: np.ndarray
    loo: np.ndarray
    group_loo: np.ndarray | None
    n_points: int

    def best(self, criterion: str) -> tuple[int, float]:
        """Index and value of the lambda minimising ``criterion`` (``"gcv"``, ``"loo"`` or ``"group_loo"``).

        Examples
        --------
        >>> c = PathCriteria(np.array([1.0, 2.0]), np.zeros(2), np.zeros(2), np.array([2.0, 1.0]),
        ...                  np.array([1.0, 2.0]), None, 10)
        >>> c.best("gcv"), c.best("loo")
        ((1, 2.0), (0, 1.0))
        """
        vals = getattr(self, criterion)
        if vals is None:
            raise ValueError(f"{criterion} was not computed on this path")
        i = int(np.nanargmin(vals))
        return i, float(self.lams[i])


@dataclass(frozen=True, eq=False)
class RidgePath:
    """The closed-form ridge of ``problem`` with ``kernel`` and ``B``, for every lambda.

    Build it with :meth:`fit`.

    Attributes
    ----------
    problem : KPLProblem
    kernel : Kernel
    K : numpy.ndarray, shape (n, n)
        The training kernel matrix.
    B : numpy.ndarray, shape (d, d)
        The output matrix.
    identity : bool
        Whether ``B`` is the identity.
    decomposition : RidgeDecomposition
    """

    problem: KPLProblem
    kernel: Kernel
    K: np.ndarray
    B: np.ndarray
    identity: bool
    decomposition: RidgeDecomposition

    @classmethod
    def fit(cls, problem: KPLProblem, kernel: Kernel, B: np.ndarray, identity: bool = False, *,
            K: np.ndarray | None = None, K_eigh: tuple[np.ndarray, np.ndarray] | None = None) -> RidgePath:
        """Decompose once for the whole lambda path.

        Parameters
        ----------
        problem : KPLProblem
        kernel : Kernel
        B : numpy.ndarray
            The output matrix (:meth:`KPLProblem.output_matrix`), and ``identity`` whether it is ``I``.
        K : numpy.ndarray, optional
            The kernel matrix of ``kernel`` on the problem's inputs, when the caller has it.
        K_eigh : (numpy.ndarray, numpy.ndarray), optional
            Its eigenvalues (clipped at 0) and eigenvectors, when the caller has them (tuning decomposes
            each candidate kernel once and keeps the decomposition of the one it chooses).

        Examples
        --------
        >>> from fdakpl.kernels import Gaussian
        >>> from fdakpl.ridge.problem import prepare_problem
        >>> p = prepare_problem(np.arange(6.0)[:, None], np.ones((6, 4)), center=False)
        >>> RidgePath.fit(p, Gaussian(2.0), *p.output_matrix(None)).coef(1e-3).shape  # 4 points: 4 hat functions
        (6, 4)
        """
        if K is None:
            K = problem.kernel_matrix(kernel)
        Bs = (B, B) if identity else sym_sqrt(B)  # I^1/2 = I^-1/2 = I
        out_eigh = problem.dictionary.scaled_gram_eigh(Bs[0])
        dec = decompose(K, problem.gram, B, problem.nu, output_eigh=out_eigh, B_sqrt=Bs,
                        symmetric=kernel.exact_symmetric(), identity=identity, K_eigh=K_eigh)
        return cls(problem, kernel, K, B, identity, dec)

    @property
    def n(self) -> int:
        """Number of training curves."""
        return self.decomposition.n

    def raw(self, lams: Any) -> Any:
        """The penalties the closed form runs at: ``lam * problem.lam_unit`` (see
        :attr:`fdakpl.ridge.problem.KPLProblem.lam_unit`); every method of the path takes lambdas in the user's
        units and converts them here."""
        unit = self.problem.lam_unit
        return lams if unit == 1.0 else lams * unit

    def coef(self, lam: float, times_B: bool = False) -> np.ndarray:
        """Representer coefficients ``A`` (``n x d``) at ``lam``; ``A B`` if ``times_B``."""
        return ridge_coef(self.decomposition, self.raw(lam), times_B=times_B)

    @functools.cached_property
    def _rotated(self) -> tuple[np.ndarray, RotatedQuadratics, np.ndarray]:
        """``N P`` (in the quadratics' units), ``P^T M_i P`` and ``yy`` of the problem's quadratic forms."""
        dec, q = self.decomposition, self.problem.quadratics
        NP = dec.U @ dec.Nt
        if q.unit != 1.0:
            NP = NP / q.unit
        return NP, self.problem.rotated_quadratics(dec.B_half @ dec.V), q.yy

    def in_units(self, values: np.ndarray) -> np.ndarray:
        """Errors in the quadratic forms' units, back in the responses' units (``inf`` or 0 when the true values
        are not representable)."""
        unit = self.problem.quadratics.unit
        if unit == 1.0:
            return values
        with np.errstate(over="ignore", under="ignore"):  # the true values may not be representable
            return values * np.float64(unit) ** 2

    def errors(self, lams: Any, loo: bool = True, in_units: bool = True, train: bool = True) -> PathErrors:
        """Training error, edf and leave-one-curve-out error at every lambda (in the responses' units; with
        ``in_units=False`` in those of the quadratic forms, which neither overflow nor underflow at extreme
        response sizes: what a criterion compares).

        Examples
        --------
        >>> from fdakpl.kernels import Gaussian
        >>> from fdakpl.ridge.problem import prepare_problem
        >>> p = prepare_problem(np.arange(6.0)[:, None], np.outer(np.arange(6.0), np.ones(4)))
        >>> e = RidgePath.fit(p, Gaussian(2.0), *p.output_matrix(None)).errors([1e-3, 1.0])
        >>> bool(e.train[0] < e.train[1])
        True
        """
        return self._errors(_lams(lams), loo, in_units, train)

    def _errors(self, lams: np.ndarray, loo: bool, in_units: bool, train: bool) -> PathErrors:
        """:meth:`errors` on a checked grid."""
        dec = self.decomposition
        NP, Mrot, yy = self._rotated
        out = path_errors(dec.s, dec.U, dec.e, NP, Mrot, yy, self.raw(lams), loo=loo, train=train)
        if not in_units:
            return out
        return PathErrors(self.in_units(out.train), out.edf, None if out.loo is None else self.in_units(out.loo))

    def loo(self, lams: Any, groups: Any = None, in_units: bool = True) -> np.ndarray:
        """Exact leave-one-curve-out error at every lambda, or leave-one-group-out with ``groups`` (one label
        per curve; curves with the same label are left out together); ``in_units`` as in :meth:`errors`."""
        lams = _lams(lams)
        idx = None if groups is None else group_indices(groups)
        if idx is None:
            out = self._errors(lams, True, in_units, False).loo
            assert out is not None
            return out
        dec = self.decomposition
        NP, Mrot, yy = self._rotated
        out = group_loo_errors(dec.s, dec.U, dec.e, NP, Mrot, yy, self.raw(lams), idx)
        return self.in_units(out) if in_units else out

    def criteria(self, lams: Any, groups: Any = None) -> PathCriteria:
        """Training error, edf, GCV, leave-one-curve-out (and leave-one-group-out with ``groups``) along
        ``lams``.

        Examples
        --------
        >>> from fdakpl.kernels import Gaussian
        >>> from fdakpl.ridge.problem import prepare_problem
        >>> p = prepare_problem(np.arange(6.0)[:, None], np.outer(np.arange(6.0), np.ones(4)))
        >>> c = RidgePath.fit(p, Gaussian(2.0), *p.output_matrix(None)).criteria([1e-3, 1.0], groups=[0, 0, 1, 1, 2, 2])
        >>> c.gcv.shape, c.group_loo.shape
        ((2,), (2,))
        """
        lams = _lams(lams)
        err = self._errors(lams, True, False, True)
        N = self.problem.n_points
        with np.errstate(divide="ignore", invalid="ignore"):
            gcv = err.train / (1.0 - err.edf / N) ** 2
        gcv = np.where(err.edf < N, gcv, np.inf)
        group = None if groups is None else self.loo(lams, groups)
        assert err.loo is not None
        return PathCriteria(lams, self.in_units(err.train), err.edf, self.in_units(gcv), self.in_units(err.loo), group,
                            N)

    def spectrum(self, lam: float) -> np.ndarray:
        """Shrinkage factors ``s_i e_l / (s_i e_l + n lam)`` (their sum is the edf of a fully observed fit)."""
        return self.decomposition.spectrum(self.raw(lam))


def _lams(lams: Any) -> np.ndarray:
    return check_grid(lams, "lams", sort=False)
