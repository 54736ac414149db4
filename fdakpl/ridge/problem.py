"""``KPLProblem``: the prepared, validated training data of a KPL fit, built once at the edge.

Everything a KPL fit needs that does not depend on the input kernel, the output matrix ``B`` or lambda:
the kernel inputs per term (finite float arrays, with the quadrature weights of curve inputs), the
responses as observed points, the loss at the responses' scale, the centring (mean function), the fitted
dictionary with its Gram matrix, the integration weights of the observed points, the atoms at those
points and the projections ``nu_i = sum_p c_ip y_ip phi(theta_ip)`` of the centred responses. Tuning
tries many kernels and ``B`` on one problem (:class:`fdakpl.ridge.path.RidgePath`); estimators fit on it
without preparing the data again.

The problem is immutable: its arrays are not written to (the kernel inputs are the problem's own copies,
never views of the caller's data), so it can be shared by every candidate fit, the fitted estimator and
its results.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(20, 2)); grid = np.linspace(0, 1, 15)
>>> Y = np.sin(np.outer(X[:, 0], grid))
>>> problem = prepare_problem(X, Y, grid, dictionary="fourier")
>>> problem.n, problem.d, problem.integration
(20, 21, 'quadrature')
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..data.functional import Observations
from ..data.integration import GRAM_TOLERANCE, gram_deviation, integration_weights, points_of
from ..data.pairing import pair_long
from ..data.preprocessing import (
    InputSpec,
    MeanFunction,
    ResponseInfo,
    center_responses,
    check_same_samples,
    n_samples_of,
    prepare_inputs,
    prepare_response,
    response_scale,
)
from ..dictionaries import Dictionary, output_dictionary
from ..kernels import Identity, Kernel, make_output_matrix
from ..losses import GroundLoss, is_square, make_loss
from ..solvers.closed_form import project_observations
from ..utils.notices import warn
from .quadratics import CurveQuadratics, RotatedQuadratics, curve_quadratics

__all__ = ["KPLProblem", "integration_notice", "prepare_problem", "refit_problem", "unsupported_atoms_message"]


def unsupported_atoms_message(rank: int, q: int) -> str:
    """The warning when the dictionary spans more dimensions than there are observed locations.

    Examples
    --------
    >>> unsupported_atoms_message(5, 3).startswith("the dictionary spans 5 dimensions")
    True
    """
    return (f"the dictionary spans {rank} dimensions but the responses are observed at only {q} distinct "
            "locations: the extra atoms are not identifiable from the data and only the penalty fixes "
            "them; use fewer atoms (a smaller n_freqs, level or n_atoms)")


@dataclass(frozen=True, eq=False)
class KPLProblem:
    """The training data of a KPL fit, prepared once (see the module docstring).

    Build it with :func:`prepare_problem`.

    Attributes
    ----------
    inputs : numpy.ndarray or dict of numpy.ndarray
        Kernel inputs (one array, or one per formula term), finite floats; the problem's own copies.
    input_weights : numpy.ndarray, dict or None
        Quadrature weights of curve inputs (per term), None for vectors.
    input_spec : InputSpec
        What the inputs looked like (to check and convert new inputs alike).
    input_labels : numpy.ndarray or None
        Sample labels of the inputs.
    obs : Observations
        The training responses as observed points.
    info : ResponseInfo
        Their labels, grid and domain.
    loss : GroundLoss
        The loss, at the responses' scale when its parameter is relative.
    response_scale : float or None
        The robust scale of the responses (losses with a relative parameter), else None.
    mean : MeanFunction or None
        The centre of the responses (None without centring).
    centred : Observations
        The responses minus ``mean``.
    dictionary : Dictionary
        The fitted dictionary.
    gram : numpy.ndarray, shape (d, d)
        Its Gram matrix.
    weights : numpy.ndarray, shape (N,)
        Integration weights ``c_ip`` of the observed points (the point-wise solvers' data term).
    integration : str
        ``"quadrature"``, ``"interpolate"`` or ``"plugin"`` (:mod:`fdakpl.data.integration`).
    phi : numpy.ndarray
        The atoms on the common grid ``(m, d)``, or at the observed points ``(N, d)``.
    nu : numpy.ndarray, shape (n, d)
        Projections of the centred responses on the atoms.
    proj_points : Observations
        The points whose weighted sums give ``nu`` and the curves' quadratic forms: ``centred``, or with
        ``integration="interpolate"`` every centred curve's linear interpolant on the distinct observed
        locations (``proj_points.grid``).
    proj_weights : numpy.ndarray
        Their weights.
    proj_phi : numpy.ndarray
        The atoms there (``phi`` itself when the points are ``centred``).
    """

    inputs: Any
    input_weights: Any
    input_spec: InputSpec
    input_labels: np.ndarray | None
    obs: Observations
    info: ResponseInfo
    loss: GroundLoss
    response_scale: float | None
    mean: MeanFunction | None
    centred: Observations
    dictionary: Dictionary
    gram: np.ndarray
    weights: np.ndarray
    integration: str
    phi: np.ndarray
    nu: np.ndarray
    proj_points: Observations
    proj_weights: np.ndarray
    proj_phi: np.ndarray

    @property
    def n(self) -> int:
        """Number of training curves."""
        return self.obs.n_samples

    @property
    def d(self) -> int:
        """Number of atoms."""
        return int(self.gram.shape[0])

    @property
    def n_points(self) -> int:
        """Number of observed response points ``N``."""
        return int(self.obs.index.size)

    @functools.cached_property
    def gram_deviation(self) -> np.ndarray:
        """Per curve, how far the atoms' Gram matrix under the curve's integration weights is from the exact one
        (:func:`fdakpl.data.integration.gram_deviation`: 0 when the weights integrate the atoms exactly); the
        observed points' own weights (trapezoid on the curve's points) with ``integration="interpolate"``."""
        return gram_deviation(self.centred, self.weights, self.phi, self.gram)

    @functools.cached_property
    def lam_unit(self) -> float:
        """The unit of lambda: the fits run at ``lam * lam_unit``, with ``lam_unit`` the mean squared norm of the
        atoms (:meth:`fdakpl.dictionaries.Dictionary.lambda_unit`; 1 for orthonormal dictionaries), so that a
        lambda means the same fit whatever the unit of the response's locations."""
        return self.dictionary.lambda_unit()

    @functools.cached_property
    def quadratics(self) -> CurveQuadratics:
        """Per-curve quadratic forms of the weighted squared error (computed once, on first use)."""
        return curve_quadratics(self.proj_points, self.proj_phi, self.proj_weights)

    @functools.cached_property
    def _rotated_cache(self) -> dict[bytes, RotatedQuadratics]:
        return {}

    def rotated_quadratics(self, P: np.ndarray) -> RotatedQuadratics:
        """:meth:`CurveQuadratics.rotated` for ``P = B^{1/2} V``, kept for the next path with the same ``B``
        (tuning tries every width with each ``B``; the forms do not depend on the kernel).

        Examples
        --------
        >>> p = prepare_problem(np.arange(4.0)[:, None], np.ones((4, 3)))
        >>> p.rotated_quadratics(np.eye(3)) is p.rotated_quadratics(np.eye(3))
        True
        """
        key = np.ascontiguousarray(P).tobytes()
        cache = self._rotated_cache
        if key not in cache:
            if len(cache) >= 8:
                cache.pop(next(iter(cache)))
            cache[key] = self.quadratics.rotated(P)
        return cache[key]

    def kernel_matrix(self, kernel: Kernel) -> np.ndarray:
        """The ``n x n`` training kernel matrix of ``kernel`` on the problem's inputs.

        Examples
        --------
        >>> from fdakpl.kernels import Gaussian
        >>> p = prepare_problem(np.arange(4.0)[:, None], np.ones((4, 3)))
        >>> p.kernel_matrix(Gaussian(1.0)).shape
        (4, 4)
        """
        return kernel.checked_matrix(self.inputs, None, self.input_weights)

    def output_matrix(self, spec: Any) -> tuple[np.ndarray, bool]:
        """``B`` for an ``output_matrix`` parameter (None, a number ``b``, a matrix or an ``OutputMatrix``) on
        the problem's atoms, checked, and whether it is the identity.

        Examples
        --------
        >>> p = prepare_problem(np.arange(4.0)[:, None], np.ones((4, 3)), dictionary="fourier")
        >>> B, identity = p.output_matrix(None)
        >>> B.shape, identity
        ((21, 21), True)
        """
        out = make_output_matrix(spec)
        if isinstance(out, Identity):
            return np.eye(self.d), True
        return out.checked(self.dictionary.scales_), False


def prepare_problem(X: Any, Y: Any, locations: Any = None, *, dictionary: str | Dictionary = "auto",
                    center: bool = True, loss: Any = "square", integration: str = "auto", domain: Any = None,
                    interpolate_inputs: bool = False, who: str = "KPL") -> KPLProblem:
    """Validate training data once and prepare everything a KPL fit needs (a :class:`KPLProblem`).

    Parameters
    ----------
    X : array-like, DataArray or mapping of terms
        Inputs (see :func:`~fdakpl.data.preprocessing.prepare_inputs`); validated here.
    Y : DataArray, array or long DataFrame
        Responses, NaN = not observed (see :func:`~fdakpl.data.preprocessing.prepare_response`); the curves
        of a long DataFrame are paired with ``X``'s samples by label (:func:`~fdakpl.data.pairing.pair_long`).
    locations : array-like, optional
        Locations of the columns of an array ``Y``.
    dictionary : str or Dictionary
        The output dictionary (``"auto"``: :func:`~fdakpl.dictionaries.output_dictionary`); fitted here.
    center : bool
        Centre the responses with their training centre.
    loss : str or GroundLoss
        The ground loss (its relative parameters are set at the responses' scale, and a robust loss gets a
        robust centre).
    integration : {"auto", "quadrature", "plugin"}
        How inner products with the atoms are estimated (:func:`~fdakpl.data.integration.integration_weights`).
    domain : (float, float), optional
        Domain of the response curves.
    interpolate_inputs : bool
        Fill NaN in input curves by linear interpolation.
    who : str
        Who asks (named in the message when ``X`` and ``Y`` describe different samples).

    Returns
    -------
    KPLProblem

    Examples
    --------
    >>> p = prepare_problem(np.arange(5.0)[:, None], np.outer(np.arange(5.0), np.ones(4)), center=False)
    >>> p.nu.shape, p.mean is None  # 4 response points: the default dictionary is the 4 hat functions on them
    ((5, 4), True)
    """
    Xv, Xw, spec, x_labels = prepare_inputs(X, interpolate=interpolate_inputs)
    Y = pair_long(Y, n_samples_of(Xv), x_labels)  # long-form curves in the order of X's samples, by label
    obs, info = prepare_response(Y, locations, domain)
    check_same_samples(n_samples_of(Xv), x_labels, obs.n_samples, info.labels, who)
    return _problem(_own(Xv), Xw, spec, x_labels, obs, info, dictionary, center, loss, integration)


def refit_problem(problem: KPLProblem, *, dictionary: str | Dictionary | None = None, center: bool | None = None,
                  loss: Any = None, integration: str | None = None) -> KPLProblem:
    """The same validated data prepared with other options (a robust loss's centre, another dictionary).

    Nothing is checked or converted again: the inputs and observations are the problem's own.

    Examples
    --------
    >>> p = prepare_problem(np.arange(5.0)[:, None], np.outer(np.arange(5.0), np.ones(4)), dictionary="fourier")
    >>> q = refit_problem(p, loss="logcosh")
    >>> q.inputs is p.inputs, q.loss.name
    (True, 'logcosh')
    """
    dic = problem.dictionary.unfitted_copy() if dictionary is None else dictionary
    if center is None and loss is None and integration is None:  # another dictionary: the response side is kept
        responses = _ResponseSide(problem.loss, problem.response_scale, problem.mean, problem.centred,
                                  problem.proj_points, problem.proj_weights, problem.weights, problem.integration)
        return _with_dictionary(problem.inputs, problem.input_weights, problem.input_spec, problem.input_labels,
                                problem.obs, problem.info, responses, dic)
    return _problem(problem.inputs, problem.input_weights, problem.input_spec, problem.input_labels, problem.obs,
                    problem.info, dic, problem.mean is not None if center is None else center,
                    problem.loss if loss is None else loss,
                    problem.integration if integration is None else integration)


def _problem(Xv: Any, Xw: Any, spec: InputSpec, x_labels: np.ndarray | None, obs: Observations, info: ResponseInfo,
             dictionary: str | Dictionary, center: bool, loss: Any, integration: str) -> KPLProblem:
    dom = info.domain
    loss_obj = make_loss(loss)
    scale = response_scale(obs, dom) if loss_obj.relative else None
    loss_obj = loss_obj if scale is None else loss_obj.at_scale(scale)
    mean, centred = center_responses(obs, dom, center, None if is_square(loss_obj) else loss_obj.derivative)
    weights, mode = integration_weights(centred, dom, integration)
    points, pweights = points_of(centred, weights, mode, dom)
    return _with_dictionary(Xv, Xw, spec, x_labels, obs, info,
                            _ResponseSide(loss_obj, scale, mean, centred, points, pweights, weights, mode), dictionary)


class _ResponseSide(NamedTuple):
    """What a problem prepares from the responses alone (it does not depend on the dictionary)."""

    loss: GroundLoss
    scale: float | None
    mean: MeanFunction | None
    centred: Observations
    points: Observations
    pweights: np.ndarray
    weights: np.ndarray
    mode: str


def _with_dictionary(Xv: Any, Xw: Any, spec: InputSpec, x_labels: np.ndarray | None, obs: Observations,
                     info: ResponseInfo, responses: _ResponseSide, dictionary: str | Dictionary) -> KPLProblem:
    """The problem from its response side and a dictionary fitted here."""
    loss_obj, scale, mean, centred, points, pweights, weights, mode = responses
    dic = output_dictionary(dictionary, centred.location).fit(centred, domain=info.domain)
    G = dic.gram()
    _warn_unsupported_atoms(obs, dic)
    phi = dic.evaluate(centred.grid if centred.grid is not None else centred.location)
    pphi = phi if points is centred else dic.evaluate(points.grid)
    nu = project_observations(points, pphi, pweights)
    return KPLProblem(Xv, Xw, spec, x_labels, obs, info, loss_obj, scale, mean, centred, dic, G, weights, mode, phi, nu,
                      points, pweights, pphi)


def integration_notice(problem: KPLProblem) -> str | None:
    """The notice when some curves' integrals cannot be estimated well from their points (None when all can).

    The closed-form routes see a curve through its projections on the atoms. With ``"quadrature"`` or
    ``"plugin"`` they are sums over the curve's points, close to the inner products ``<y_i, phi>`` only where
    the atoms' Gram matrix under the curve's weights is close to the exact one (``max |G_i - G| <= 0.1
    max G_kk``, :data:`fdakpl.data.integration.GRAM_TOLERANCE`); a curve observed at fewer points than atoms,
    or with a gap wider than the atoms' oscillations, cannot be. With ``"interpolate"`` the atoms are
    integrated on the whole grid (their Gram matrix is the grid's), and a curve is flagged when it has fewer
    points than atoms and than half the grid: its interpolant then stands for most of it.

    Examples
    --------
    >>> Y = np.ones((3, 40)); Y[0, 3:] = np.nan  # curve 0 seen at 3 points
    >>> p = prepare_problem(np.arange(3.0)[:, None], Y, np.linspace(0, 1, 40), dictionary="fourier")
    >>> integration_notice(p).startswith("1 of 3 curves")
    True
    """
    counts = problem.obs.counts
    if problem.integration == "interpolate":
        m = problem.obs.grid.size if problem.obs.grid is not None else 2 * problem.d
        bad = np.flatnonzero(counts < min(problem.d, m // 2))  # seen at under half the grid and under d points
        how = np.asarray(-counts, dtype=float)
    else:
        how = problem.gram_deviation
        bad = np.flatnonzero(how > GRAM_TOLERANCE)
    if bad.size == 0:
        return None
    worst = int(bad[np.argmax(how[bad])])
    labels = problem.info.labels
    name = repr(labels[worst].item() if hasattr(labels[worst], "item") else labels[worst]) if labels is not None \
        else str(worst)
    if problem.integration == "interpolate":
        return (f"{bad.size} of {problem.n} curves are observed at fewer points than the {problem.d} atoms and than "
                f"half the grid (curve "
                f"{name}: {int(counts[worst])} points): integration='interpolate' bridges their gaps linearly, so "
                "their projections on the atoms are mostly the interpolant's; fit only the observed points with "
                "solver='exact_partial', or use fewer atoms")
    return (f"{bad.size} of {problem.n} curves have integration weights ({problem.integration}) under which the "
            f"{problem.d} atoms are far from their exact Gram matrix (up to {how[worst]:.2g} of its largest "
            f"diagonal entry, curve {name} with {int(counts[worst])} points): their projections on the atoms are "
            "rough; fit only the observed points with solver='exact_partial', or use fewer atoms")


def _warn_unsupported_atoms(obs: Observations, dic: Dictionary) -> None:
    d = dic.n_atoms_
    if d <= int(obs.counts.max()):  # one curve alone is seen at d locations or more (counts cached by obs)
        return
    if obs.grid is not None and obs.grid_index is not None:
        q = int(np.count_nonzero(np.bincount(obs.grid_index, minlength=obs.grid.size)))
    else:
        q = np.unique(obs.location).size
    if d <= q:  # the rank cannot exceed d
        return
    # rank of G from its cached eigenvalues (G is symmetric: singular values = |eigenvalues|)
    ev = np.abs(dic.scaled_gram_eigh()[0])
    rank = int(np.count_nonzero(ev > 1e-10 * max(float(np.abs(dic.gram()).max()), 1e-300) * d))
    if rank > q:
        warn(unsupported_atoms_message(rank, q), stacklevel=3)


def _own(x: Any) -> Any:
    """A copy of kernel inputs (arrays, or a mapping of arrays per term) that shares no memory with the caller's."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, dict):
        return {k: _own(v) for k, v in x.items()}
    return x
