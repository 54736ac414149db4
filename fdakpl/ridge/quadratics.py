"""Per-curve quadratic forms: the one formula behind every curve-level criterion of the closed-form ridge.

Rows are curves. With ``K = U diag(s) U^T``, ``B^{1/2} G B^{1/2} = V diag(e) V^T`` and ``P = B^{1/2} V``,
the fitted coefficients of curve ``i`` in the rotated basis are
``R_i = sum_k U_ik s_k (U^T N P)_k / (s_k e + n lam)`` (``h_i = P R_i``). Leaving curve ``i`` out (penalty
``n lam`` and mean function held fixed) gives ``C_i = R_i - t_i * g_i / (1 - e * t_i)`` with
``t_il = sum_k U_ik^2 s_k / (s_k e_l + n lam)`` and ``g_i = (N P)_i - e * R_i``. The weighted squared
error of a coefficient vector ``c`` on curve ``i``'s observed points is the quadratic form

    ``sum_p c_ip (y_ip - phi_ip^T P c)^2 = yy_i - 2 c^T (N P)_i + c^T (P^T M_i P) c``

with ``yy_i = sum_p c_ip y_ip^2`` and ``M_i = sum_p c_ip phi_ip phi_ip^T`` (:class:`CurveQuadratics`), so the
training error (``c = R_i``), the exact leave-one-curve-out error (``c = C_i``) and the effective degrees
of freedom ``sum_il t_il (P^T M_i P)_ll`` (the trace of the smoother from observed values to fitted values
at the observed points) along a whole lambda path cost ``O(L n^2 d + L n m d)`` (``m`` grid points; the
``n`` matrices ``M_i`` are never formed: the forms are evaluated through ``phi P`` at the points, or through
the one shared ``M`` of fully observed curves). Leaving a group of curves out replaces the scalar leverage
by a ``|g| x |g|`` solve per direction (:func:`group_loo_errors`).

Responses so large or small that their squares would overflow or underflow are divided by a power of two
(exact) before the quadratic forms are built (``CurveQuadratics.unit``); the errors are returned in the
responses' own units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data.functional import Observations
from ..data.scaling import power_of_two_scale

__all__ = ["CurveQuadratics", "PathErrors", "RotatedQuadratics", "curve_quadratics", "group_indices",
           "group_loo_errors", "path_errors"]


@dataclass(frozen=True)
class CurveQuadratics:
    """Per-curve pieces of the weighted squared error of a coefficient vector.

    ``sum_p c_ip (y_ip - phi_ip^T h)^2 = unit^2 (yy_i - 2 h^T nu_i / unit + h^T M_i h / unit^2)`` with
    ``M_i = sum_p c_ip phi_ip phi_ip^T``, which is never formed per curve: :meth:`rotated` evaluates the
    quadratic forms through the points (or through the one shared ``M`` of fully observed curves with
    quadrature weights).

    Attributes
    ----------
    yy : numpy.ndarray, shape (n,)
        ``sum_p c_ip (y_ip / unit)^2``.
    M : numpy.ndarray or None, shape (d, d)
        The shared ``M_i`` when every curve has the same one, else None.
    W : numpy.ndarray or None, shape (n, m)
        Curves on a common grid: the weights (0 where unobserved).
    phi : numpy.ndarray, shape (m, d) or (N, d)
        The atoms on the grid, or at the observed points (irregular sampling).
    index, weights : numpy.ndarray or None
        Irregular sampling: the curve and the weight of each point.
    unit : float
        A power of two near the size of the responses (1 for ordinary sizes): ``yy`` is in units of
        ``unit^2`` and the projections must be divided by ``unit``.
    """

    yy: np.ndarray
    M: np.ndarray | None
    W: np.ndarray | None
    phi: np.ndarray
    index: np.ndarray | None = None
    weights: np.ndarray | None = None
    unit: float = 1.0

    @property
    def shared(self) -> bool:
        """Whether every curve has the same ``M_i``."""
        return self.M is not None

    def rotated(self, P: np.ndarray) -> RotatedQuadratics:
        """The quadratic forms in the coordinates ``h = P c``.

        Examples
        --------
        >>> q = curve_quadratics(Observations.from_dense(np.ones((2, 2)), np.array([0.0, 1.0])), np.ones((2, 1)),
        ...                      np.array([0.5, 0.5, 0.5, 0.5]))
        >>> q.rotated(2 * np.eye(1)).quad(np.ones((2, 1, 1)))
        array([[4.],
               [4.]])
        """
        n = self.yy.size
        if self.M is not None:
            Mrot = P.T @ self.M @ P
            return RotatedQuadratics(n, np.broadcast_to(np.diagonal(Mrot), (n, Mrot.shape[0])), Mrot=Mrot)
        F = self.phi @ P
        if self.W is not None:
            m, d = F.shape
            if d * d <= m * d and n * d * d <= 2**24:  # few atoms: the n matrices P^T M_i P are the cheaper route
                Mrot = (self.W @ (F[:, :, None] * F[:, None, :]).reshape(m, d * d)).reshape(n, d, d)
                return RotatedQuadratics(n, np.diagonal(Mrot, axis1=1, axis2=2), Mrot=Mrot)
            return RotatedQuadratics(n, self.W @ F**2, W=self.W, F=F)
        assert self.index is not None and self.weights is not None
        diag = np.zeros((n, F.shape[1]))
        np.add.at(diag, self.index, self.weights[:, None] * F**2)
        return RotatedQuadratics(n, diag, F=F, index=self.index, weights=self.weights)


@dataclass(frozen=True)
class RotatedQuadratics:
    """The quadratic forms ``c^T (P^T M_i P) c`` of :class:`CurveQuadratics` for coefficient stacks.

    Attributes
    ----------
    n : int
    diag : numpy.ndarray, shape (n, d)
        ``diag(P^T M_i P)`` per curve (what the effective degrees of freedom need).
    Mrot : numpy.ndarray or None
        The shared ``P^T M P`` (``d x d``) or one per curve (``n x d x d``, when the atoms are fewer than the grid
        points); else the forms go through ``F = phi P`` at the grid (``W``) or at the points (``index``,
        ``weights``).
    """

    n: int
    diag: np.ndarray
    Mrot: np.ndarray | None = None
    W: np.ndarray | None = None
    F: np.ndarray | None = None
    index: np.ndarray | None = None
    weights: np.ndarray | None = None

    def quad(self, C: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """``C_il^T (P^T M_i P) C_il`` for a stack ``C`` of shape ``(k, L, d)`` (curves ``rows``, default all)."""
        if self.Mrot is not None:
            if self.Mrot.ndim == 2:
                return np.einsum("nld,nld->nl", C @ self.Mrot, C)
            M = self.Mrot if rows is None else self.Mrot[rows]
            return np.einsum("nld,nld->nl", np.matmul(C, M), C)
        assert self.F is not None
        G = C @ self.F.T  # (k, L, m) on the grid, (k, L, N) at every point
        if self.W is not None:
            W = self.W if rows is None else self.W[rows]
            return np.einsum("nlm,nm->nl", G * G, W)
        assert self.index is not None and self.weights is not None
        if rows is None:
            k, pts, cur, w = self.n, np.arange(self.index.size), self.index, self.weights
        else:  # the points of the selected curves, their curves renumbered 0..k-1
            pos = np.full(self.n, -1)
            pos[rows] = np.arange(len(rows))
            pts = np.flatnonzero(pos[self.index] >= 0)
            k, cur, w = len(rows), pos[self.index[pts]], self.weights[pts]
        vals = G[cur, :, pts] ** 2 * w[:, None]  # (N', L): each point's squared fit, weighted
        out = np.zeros((k, C.shape[1]))
        np.add.at(out, cur, vals)
        return out


def curve_quadratics(obs: Observations, phi_obs: np.ndarray, weights: np.ndarray) -> CurveQuadratics:
    """Build :class:`CurveQuadratics` from the (centred) observations.

    Parameters
    ----------
    obs : Observations
    phi_obs : numpy.ndarray
        Atoms at the observed points ``(N, d)``, or on ``obs.grid`` ``(m, d)``.
    weights : numpy.ndarray, shape (N,)
        Integration weights ``c_ip``.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, 2.0], [3.0, np.nan]]), np.array([0.0, 1.0]))
    >>> q = curve_quadratics(obs, np.ones((2, 1)), np.array([0.5, 0.5, 1.0]))
    >>> q.yy, q.rotated(np.eye(1)).diag[:, 0]
    (array([2.5, 9. ]), array([1., 1.]))
    """
    n = obs.n_samples
    unit = power_of_two_scale(obs.value)
    if 2.0 ** -250 < unit <= 2.0 ** 250:  # ordinary sizes: left as they are
        unit = 1.0
    value = obs.value / unit if unit != 1.0 else obs.value
    on_grid = obs.grid is not None and obs.grid_index is not None and phi_obs.shape[0] == obs.grid.size
    yy = np.bincount(obs.index, weights=weights * value**2, minlength=n)
    if on_grid:
        assert obs.grid is not None and obs.grid_index is not None
        W = np.nan_to_num(obs.with_values(weights).to_dense())  # 0 where a curve has no point
        if obs.fully_observed and np.allclose(W, W[0]):
            return CurveQuadratics(yy, (phi_obs * W[0][:, None]).T @ phi_obs, None, phi_obs, unit=unit)
        return CurveQuadratics(yy, None, W, phi_obs, unit=unit)
    return CurveQuadratics(yy, None, None, phi_obs, np.asarray(obs.index), np.asarray(weights), unit)


@dataclass(frozen=True)
class PathErrors:
    """Mean over curves of the weighted training and leave-one-curve-out errors, and the effective degrees
    of freedom, along a lambda path (arrays aligned with the lambdas; ``loo`` None when not computed)."""

    train: np.ndarray
    edf: np.ndarray
    loo: np.ndarray | None


def path_errors(s: np.ndarray, U: np.ndarray, e: np.ndarray, NP: np.ndarray, Mrot: RotatedQuadratics,
                yy: np.ndarray, lams: np.ndarray, loo: bool = True, train: bool = True) -> PathErrors:
    """Training error, edf and exact leave-one-curve-out error at every lambda (see the module notes).

    Parameters
    ----------
    s, U : numpy.ndarray
        Eigenvalues (clipped at 0) and eigenvectors of ``K``.
    e : numpy.ndarray
        Eigenvalues of ``B^{1/2} G B^{1/2}``.
    NP : numpy.ndarray, shape (n, d)
        ``N P`` (in the units of the quadratics).
    Mrot : RotatedQuadratics
        The quadratic forms ``P^T M_i P`` (:meth:`CurveQuadratics.rotated`).
    yy : numpy.ndarray, shape (n,)
    lams : numpy.ndarray
    loo, train : bool
        Compute the leave-one-curve-out error, the training error and edf (a criterion needs only one of them).

    Returns
    -------
    PathErrors

    Examples
    --------
    >>> s, U = np.array([1.0, 2.0]), np.eye(2)
    >>> Mrot = RotatedQuadratics(2, np.ones((2, 1)), Mrot=np.eye(1))
    >>> err = path_errors(s, U, np.ones(1), np.array([[1.0], [2.0]]), Mrot, np.array([1.0, 4.0]),
    ...                   np.array([1e-9]))
    >>> np.round(err.train, 6), np.round(err.edf, 6)
    (array([0.]), array([2.]))
    """
    n, d = NP.shape
    Q = U**2
    UtNP = U.T @ NP
    out_train = np.full(lams.size, np.nan)
    edf = np.full(lams.size, np.nan)
    out_loo = np.empty(lams.size) if loo else None
    M = Mrot.Mrot if Mrot.Mrot is not None and Mrot.Mrot.ndim == 2 else None  # the one shared P^T M P
    block = max(1, _BLOCK_BYTES // (8 * n * d))
    for start in range(0, lams.size, block):
        lam_b = lams[start:start + block]
        L = lam_b.size
        # (n, L d) arrays, the (lambda, l) pairs along the rows: every operation below is a matrix product or
        # a same-shape (or row-vector) update of a contiguous array
        eL = np.tile(e, L)
        sd = np.multiply.outer(s, eL)
        sd += np.repeat(n * lam_b, d)
        np.divide(s[:, None], sd, out=sd)  # s_k / (s_k e_l + n lam)
        NPt = np.tile(NP, (1, L))
        X = np.tile(UtNP, (1, L))
        X *= sd
        R = U @ X  # fitted coefficients
        T = np.matmul(Q, sd, out=X)  # leverages t_il
        if train:
            out_train[start:start + block] = np.mean(_errors(R, NP, NPt, M, Mrot, yy, L), axis=0)
            edf[start:start + block] = np.einsum("nld,nd->l", T.reshape(n, L, d), Mrot.diag)
        if out_loo is None:
            continue
        C = np.multiply(R, eL, out=sd)
        np.subtract(NPt, C, out=C)  # g
        C *= T
        T *= eL
        np.subtract(1.0, T, out=T)
        C /= T
        np.subtract(R, C, out=C)  # R - t g / (1 - e t): the left-out fits
        out_loo[start:start + block] = np.mean(_errors(C, NP, NPt, M, Mrot, yy, L, spare=T), axis=0)
    return PathErrors(out_train, edf, out_loo)


#: the arrays of one block of lambdas in :func:`path_errors` stay under this size, so that a block's half-dozen
#: arrays stay in the core's cache: a 41-atom path of 21 lambdas on 70 curves took 1.6-2.0 ms in one block and
#: 1.0-1.3 ms in blocks of this size (21 atoms: the same, one block either way); smaller blocks add Python overhead
_BLOCK_BYTES = 256 * 1024


def _errors(C: np.ndarray, NP: np.ndarray, NPt: np.ndarray, M: np.ndarray | None, Mrot: RotatedQuadratics,
            yy: np.ndarray, L: int, spare: np.ndarray | None = None) -> np.ndarray:
    """``yy_i - 2 c^T (N P)_i + c^T (P^T M_i P) c`` for the ``(n, L d)`` stack ``C`` of coefficient vectors
    (``NPt``: ``N P`` tiled ``L`` times; ``M``: the shared ``P^T M P`` or None; ``spare``: a free array of
    ``C``'s shape to work in), shape ``(n, L)``."""
    n, d = NP.shape
    C3 = C.reshape(n, L, d)
    if M is None:
        return yy[:, None] - 2.0 * np.einsum("nld,nd->nl", C3, NP) + Mrot.quad(C3)
    MC = np.matmul(C3, M, out=None if spare is None else spare.reshape(n, L, d))
    MC -= 2.0 * NPt.reshape(n, L, d)
    return yy[:, None] + np.einsum("nld,nld->nl", C3, MC)  # c^T (M c - 2 N P)


def group_indices(groups: Sequence) -> list[np.ndarray] | None:
    """Positions of the curves of each group (None when every group is one curve).

    Examples
    --------
    >>> [g.tolist() for g in group_indices(["a", "b", "a"])]
    [[0, 2], [1]]
    """
    labels = np.asarray(groups)
    _, inv = np.unique(labels, return_inverse=True)
    inv = inv.ravel()
    if inv.max() + 1 == labels.size:
        return None
    return [np.flatnonzero(inv == g) for g in range(inv.max() + 1)]


def group_loo_errors(s: np.ndarray, U: np.ndarray, e: np.ndarray, NP: np.ndarray, Mrot: RotatedQuadratics,
                     yy: np.ndarray, lams: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Mean over curves of the leave-one-GROUP-out weighted error, at every lambda.

    Per direction ``l`` the rotated problem is a linear smoother ``R = T NP`` with
    ``T = U diag(s / (s e_l + n lam)) U^T``; leaving the curves of group ``g`` out gives
    ``C_g = (I - e_l T_gg)^{-1} (R_g - T_gg NP_g)`` (one ``|g| x |g|`` solve per direction). With groups of
    one curve each this is the leave-one-curve-out error of :func:`path_errors`.

    Examples
    --------
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(6, 1)); K = np.exp(-(X - X.T) ** 2)
    >>> s, U = np.linalg.eigh(K); NP = rng.normal(size=(6, 2)); yy = (NP ** 2).sum(1) + 1
    >>> one = [np.array([i]) for i in range(6)]; lams = np.array([0.1])
    >>> Mrot = RotatedQuadratics(6, np.ones((6, 2)), Mrot=np.eye(2))
    >>> bool(np.allclose(group_loo_errors(s, U, np.ones(2), NP, Mrot, yy, lams, one),
    ...                  path_errors(s, U, np.ones(2), NP, Mrot, yy, lams).loo))
    True
    """
    n, d = NP.shape
    UtNP = U.T @ NP
    out = np.empty(lams.size)
    for k, lam in enumerate(lams):
        sd = s[:, None] / (np.outer(s, e) + n * lam)  # (n, d)
        R = U @ (sd * UtNP)
        total = 0.0
        for idx in groups:
            Ug = U[idx]  # (m, n)
            T = np.einsum("gk,kl,hk->lgh", Ug, sd, Ug)  # (d, m, m)
            rhs = R[idx].T - np.einsum("lgh,hl->lg", T, NP[idx])  # (d, m)
            A = np.eye(idx.size)[None] - e[:, None, None] * T
            C = np.linalg.solve(A, rhs[..., None])[..., 0].T  # (m, d): the left-out fits of the group
            lin = np.einsum("gd,gd->g", C, NP[idx])
            quad = Mrot.quad(C[:, None, :], rows=idx)[:, 0]
            total += float(np.sum(yy[idx] - 2.0 * lin + quad))
        out[k] = total / n
    return out
