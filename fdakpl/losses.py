"""Ground losses ``l(y, yhat)`` of integral functional losses, with derivatives.

An integral loss (paper, equation ``eq :: int loss``) integrates a ground loss
over the response domain, ``L(y0, y1) = int l(y0(theta), y1(theta)) dtheta``.
KPL's iterative solver (:mod:`fdakpl.solvers.iterative`) needs ``l`` and its first
derivative with respect to the prediction ``yhat`` (the second argument); the
second derivative, when known, only sets the solver's preconditioner.

Every loss here is vectorised: it takes arrays ``y`` and ``yhat`` of the same
shape and returns an array of that shape.

=====================  =======================================  ============================
loss                   ``l(y, yhat)`` with ``a = yhat - y``     behaviour
=====================  =======================================  ============================
:class:`Square`        ``a**2``                                 ridge; the closed forms
:class:`LogCosh`       ``log(cosh(gamma a)) / gamma``           ``~ gamma a**2 / 2`` near 0,
                                                                ``~ |a| - log(2)/gamma`` far:
                                                                robust (paper's logcosh-KPL)
:class:`Huber`         ``a**2/2`` or ``delta(|a|-delta/2)``     robust, once differentiable
:class:`PseudoHuber`   ``delta**2 (sqrt(1+(a/delta)**2)-1)``    robust, smooth
:class:`CustomLoss`    user functions                           any differentiable loss
=====================  =======================================  ============================

Note the scales: the square loss is ``a**2`` (the paper's convention, which
the ridge closed forms solve) while the robust losses behave like ``c a**2``
near zero with ``c = gamma / 2`` (logcosh) or ``1/2`` (Huber, pseudo-Huber),
so one ``lam`` does not regularise them equally.

Unit-free parameters
--------------------
The parameters of the robust losses (logcosh's ``gamma``, Huber's and
pseudo-Huber's ``delta``) are *relative* by default (``relative=True``): the
estimators (:class:`~fdakpl.estimators.kpl.KPLRegressor`,
:class:`~fdakpl.regression.model.FunctionalRegression`) measure the robust scale
``s`` of the responses (:func:`fdakpl.data.preprocessing.response_scale`, the MAD
of their deviations from the pointwise median) and fit with
``loss.at_scale(s)``, the loss ``s**2 l(y / s, yhat / s)``. Residuals are
then measured in units of ``s`` (logcosh turns linear at ``|a| ~ s / gamma``,
Huber at ``|a| = delta s``), and the loss is in the squared units of the
response, like the square loss, so the model is the same in any unit:
responses in degrees give exactly the predictions in radians times
``180 / pi`` for the same ``lam``. With ``relative=False`` the parameter is in
the units of the response (the paper's convention). The solver functions
(:mod:`fdakpl.solvers.iterative`) use a loss as it is (``scale=1`` unless set).

Examples
--------
>>> import numpy as np
>>> from fdakpl.losses import Square, make_loss
>>> Square().value(np.array([1.0]), np.array([3.0]))
array([4.])
>>> make_loss("logcosh(5)").gamma
5.0
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .data.validation import check_number
from .utils.docstrings import fill_doc
from .utils.saved import saved

__all__ = ["CustomLoss", "GroundLoss", "Huber", "LogCosh", "PseudoHuber", "Square", "is_square", "make_loss"]

_LOG2 = math.log(2.0)


#: the ``relative`` and ``scale`` parameters of the one-parameter robust losses, described once
RELATIVE_SCALE_DOC = """\
relative : bool, default True
    The parameter is relative to the robust scale ``s`` of the responses
    (the estimators fit with :meth:`GroundLoss.at_scale`; see the module
    docstring), so the model does not depend on the unit of the response.
    False: the parameter is in the units of the response.
scale : float, default 1.0
    ``s``, set by :meth:`GroundLoss.at_scale` (``scale=1``: the textbook loss)."""


class GroundLoss:
    """Base class of ground losses ``l(y, yhat)``.

    Subclasses implement :meth:`value` and :meth:`derivative` (with respect to
    ``yhat``); :meth:`second_derivative` defaults to a central difference of
    :meth:`derivative`. ``name`` is a short label used in messages.

    Examples
    --------
    >>> Square().value(np.array([1.0]), np.array([3.0]))
    array([4.])
    >>> isinstance(LogCosh(2.0), GroundLoss)
    True
    """

    name: str = "loss"

    def value(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """``l(y, yhat)`` elementwise."""
        raise NotImplementedError

    def derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """``d l(y, yhat) / d yhat`` elementwise."""
        raise NotImplementedError

    def second_derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``d^2 l(y, yhat) / d yhat^2`` elementwise (central difference unless overridden)."""
        yhat = np.asarray(yhat, dtype=float)
        h = 1e-5 * np.maximum(1.0, np.abs(yhat))
        return (self.derivative(y, yhat + h) - self.derivative(y, yhat - h)) / (2 * h)

    @property
    def is_square(self) -> bool:
        """Whether this is the square loss (the closed-form solvers' loss)."""
        return False

    @property
    def relative(self) -> bool:
        """Whether the loss's parameter is relative to the scale of the responses."""
        return False

    def at_scale(self, scale: float) -> GroundLoss:
        """The loss for responses of robust scale ``scale`` (itself unless its parameter is relative).

        Examples
        --------
        >>> LogCosh(2.0).at_scale(0.5)
        LogCosh(gamma=2.0, scale=0.5)
        >>> Square().at_scale(0.5)
        Square()
        """
        if not self.relative:
            return self
        return replace(self, scale=check_number(scale, f"{type(self).__name__}: scale"))  # type: ignore[type-var]


@saved()
@dataclass(frozen=True)
class Square(GroundLoss):
    """Square ground loss ``l(y, yhat) = (yhat - y)**2``: the functional square loss.

    With it the iterative solver computes the ridge estimators of the closed
    forms (:mod:`fdakpl.solvers.closed_form`) and of :func:`fdakpl.solvers.partial.exact_partial_ridge`.

    Examples
    --------
    >>> loss = Square()
    >>> loss.value(np.array([0.0, 1.0]), np.array([2.0, 1.0])), loss.derivative(np.array([0.0]), np.array([2.0]))
    (array([4., 0.]), array([4.]))
    """

    name: str = field(default="square", init=False, repr=False)

    @property
    def is_square(self) -> bool:
        """True."""
        return True

    def value(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``(yhat - y)**2``."""
        a = np.asarray(yhat, dtype=float) - y
        return a * a

    def derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``2 (yhat - y)``."""
        return 2.0 * (np.asarray(yhat, dtype=float) - y)

    def second_derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``2``."""
        return np.full(np.broadcast(np.asarray(y), np.asarray(yhat)).shape, 2.0)


@saved("relative", "scale", register=False)
class _ScaledLoss(GroundLoss):
    """Shared checks and repr of the losses with one parameter (``_param``), ``relative`` and ``scale``."""

    _param: ClassVar[str]
    relative: bool
    scale: float

    def __post_init__(self) -> None:
        cls = type(self).__name__
        object.__setattr__(self, self._param, check_number(getattr(self, self._param), f"{cls}: {self._param}"))
        object.__setattr__(self, "scale", check_number(self.scale, f"{cls}: scale"))
        object.__setattr__(self, "relative", bool(self.relative))

    def __repr__(self) -> str:
        parts = [f"{self._param}={getattr(self, self._param)!r}"]
        if not self.relative:
            parts.append("relative=False")
        if self.scale != 1.0:
            parts.append(f"scale={self.scale!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


@fill_doc(relative_scale=RELATIVE_SCALE_DOC)
@saved("gamma")
@dataclass(frozen=True, repr=False)
class LogCosh(_ScaledLoss):
    """Parametrised logcosh ground loss ``l(y, yhat) = log(cosh(gamma (yhat - y))) / gamma``.

    The paper's robust loss (supplement, "Parametrized logcosh loss"): about
    ``gamma a**2 / 2`` for residuals ``|a| << 1/gamma`` and ``|a| - log(2)/gamma``
    for ``|a| >> 1/gamma``, so a large ``gamma`` approaches the absolute
    (least absolute deviation) loss and resists outliers; ``1/gamma`` is the
    residual size where the loss turns from quadratic to linear.

    By default ``gamma`` is unit-free (``relative=True``): fitted at the robust
    scale ``s`` of the responses, the loss is ``s**2 log(cosh(gamma a / s)) /
    gamma``; it turns linear at residuals of about ``s / gamma``, and the same
    model comes out in any unit. The default ``gamma = 1`` keeps 93% of least
    squares' efficiency for normal residuals of standard deviation ``s``
    (95% at ``gamma = 0.8``, 84% at 2, 78% at 3); larger values resist outliers
    more. The paper's ``gamma`` (``{0.25, ..., 10}`` on DTI, ``25`` against
    outliers) is in the units of its responses: ``LogCosh(25, relative=False)``.

    Computed as ``(|b| + log1p(exp(-2|b|)) - log 2) / gamma`` with
    ``b = gamma a``, which does not overflow, for ``|b| >= 1``, and as
    ``log1p(2 sinh(b/2)**2) / gamma``, which does not cancel, for ``|b| < 1``.

    Parameters
    ----------
    gamma : float, default 1.0
        ``gamma > 0``.
    %(relative_scale)s

    Examples
    --------
    >>> loss = LogCosh(gamma=10.0)
    >>> y, yhat = np.zeros(3), np.array([0.0, 1e-3, 1e3])
    >>> loss.value(y, yhat)
    array([0.00000000e+00, 4.99991667e-06, 9.99930685e+02])
    >>> loss.derivative(y, yhat)
    array([0.  , 0.00999967, 1.  ])
    >>> bool(np.allclose(loss.at_scale(180 / np.pi).value(y, yhat * 180 / np.pi),
    ...                  (180 / np.pi) ** 2 * loss.value(y, yhat)))
    True
    """

    gamma: float = 1.0
    relative: bool = True
    scale: float = 1.0
    name: str = field(default="logcosh", init=False, repr=False)
    _param: ClassVar[str] = "gamma"

    def value(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``s**2 log(cosh(gamma a / s)) / gamma``, accurate for small and overflow-free for large ``|gamma a|``."""
        b = np.abs(self.gamma * (np.asarray(yhat, dtype=float) - y) / self.scale)
        small = b < 1.0
        out = np.empty_like(b)
        bs = b[small]
        out[small] = np.log1p(2.0 * np.sinh(0.5 * bs) ** 2)  # no cancellation near 0
        bl = b[~small]
        out[~small] = bl + np.log1p(np.exp(-2.0 * bl)) - _LOG2  # no overflow for large |b|
        return out * (self.scale**2 / self.gamma)

    def derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``s tanh(gamma a / s)``."""
        return self.scale * np.tanh(self.gamma * (np.asarray(yhat, dtype=float) - y) / self.scale)

    def second_derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``gamma (1 - tanh(gamma a / s)**2)``."""
        t = np.tanh(self.gamma * (np.asarray(yhat, dtype=float) - y) / self.scale)
        return self.gamma * (1.0 - t * t)


@dataclass(frozen=True, repr=False)
class _ThresholdLoss(_ScaledLoss):
    """Parameters of the Huber losses: ``delta``, the residual size (relative to ``scale``) where they turn linear."""

    delta: float = 1.0
    relative: bool = True
    scale: float = 1.0
    _param: ClassVar[str] = "delta"

    @property
    def threshold(self) -> float:
        """``delta * scale``, the threshold in the units of the residuals.

        Examples
        --------
        >>> Huber(1.5).at_scale(2.0).threshold
        3.0
        """
        return self.delta * self.scale


@fill_doc(relative_scale=RELATIVE_SCALE_DOC)
@saved("delta")
@dataclass(frozen=True, repr=False)
class Huber(_ThresholdLoss):
    """Huber ground loss: ``a**2 / 2`` for ``|a| <= delta``, ``delta (|a| - delta / 2)`` beyond.

    Once continuously differentiable (its second derivative jumps at
    ``|a| = delta``), which L-BFGS handles; prefer :class:`PseudoHuber` or
    :class:`LogCosh` for a smooth robust loss.

    By default ``delta`` is unit-free (``relative=True``): fitted at the robust
    scale ``s`` of the responses, the threshold is ``delta * s``. The default
    ``delta = 1`` keeps 90% of least squares' efficiency for normal residuals
    of standard deviation ``s`` (Huber's classical 1.345 keeps 95%).

    Parameters
    ----------
    delta : float, default 1.0
        Residual size where the loss turns linear, ``delta > 0``.
    %(relative_scale)s

    Examples
    --------
    >>> Huber(1.0).value(np.zeros(2), np.array([0.5, 3.0]))
    array([0.125, 2.5  ])
    >>> Huber(1.0).at_scale(2.0).value(np.zeros(2), np.array([1.0, 6.0])) / 4
    array([0.125, 2.5  ])
    """

    name: str = field(default="huber", init=False, repr=False)

    def value(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """Quadratic inside ``[-delta s, delta s]``, linear outside."""
        a = np.abs(np.asarray(yhat, dtype=float) - y)
        d = self.threshold
        return np.where(a <= d, 0.5 * a * a, d * (a - 0.5 * d))

    def derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``clip(a, -delta s, delta s)``."""
        d = self.threshold
        return np.clip(np.asarray(yhat, dtype=float) - y, -d, d)

    def second_derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``1`` inside ``[-delta s, delta s]``, ``0`` outside."""
        return (np.abs(np.asarray(yhat, dtype=float) - y) <= self.threshold).astype(float)


@fill_doc(relative_scale=RELATIVE_SCALE_DOC)
@saved("delta")
@dataclass(frozen=True, repr=False)
class PseudoHuber(_ThresholdLoss):
    """Pseudo-Huber ground loss ``delta**2 (sqrt(1 + (a / delta)**2) - 1)``: a smooth Huber.

    By default ``delta`` is unit-free (``relative=True``): fitted at the robust
    scale ``s`` of the responses, ``delta * s`` takes its place.

    Parameters
    ----------
    delta : float, default 1.0
        ``delta > 0``; ``~ a**2 / 2`` for ``|a| << delta``, ``~ delta |a|`` beyond.
    %(relative_scale)s

    Examples
    --------
    >>> PseudoHuber(1.0).derivative(np.zeros(2), np.array([0.0, 1e6]))
    array([0., 1.])
    """

    name: str = field(default="pseudo_huber", init=False, repr=False)

    def value(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``d**2 (sqrt(1 + (a/d)**2) - 1)`` with ``d = delta s`` (as ``a**2 / (1 + sqrt(1 + (a/d)**2))``)."""
        a = np.asarray(yhat, dtype=float) - y
        r = np.hypot(1.0, a / self.threshold)
        return a * a / (1.0 + r)

    def derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``a / sqrt(1 + (a/d)**2)``."""
        a = np.asarray(yhat, dtype=float) - y
        return a / np.hypot(1.0, a / self.threshold)

    def second_derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """``(1 + (a/d)**2) ** -1.5``."""
        a = np.asarray(yhat, dtype=float) - y
        return np.hypot(1.0, a / self.threshold) ** -3.0


class CustomLoss(GroundLoss):
    """A user-supplied differentiable ground loss.

    Parameters
    ----------
    value : callable
        ``value(y, yhat) -> array``, vectorised over arrays of one shape.
    derivative : callable
        ``derivative(y, yhat) -> array``, the derivative with respect to
        ``yhat``. Required: the iterative solver is gradient based.
    second_derivative : callable, optional
        Only used to scale the solver's preconditioner; a central difference
        of ``derivative`` is used when omitted.
    name : str, default "custom"

    Examples
    --------
    >>> quartic = CustomLoss(lambda y, f: (f - y) ** 4, lambda y, f: 4 * (f - y) ** 3, name="quartic")
    >>> quartic.derivative(np.zeros(1), np.array([2.0]))
    array([32.])
    >>> CustomLoss(lambda y, f: (f - y) ** 4, None)
    Traceback (most recent call last):
    ...
    TypeError: CustomLoss needs derivative=..., the derivative d l(y, yhat) / d yhat (a callable); ...
    """

    def __init__(self, value: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 derivative: Callable[[np.ndarray, np.ndarray], np.ndarray] | None,
                 second_derivative: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                 name: str = "custom") -> None:
        if not callable(value):
            raise TypeError(f"CustomLoss needs value=..., a callable l(y, yhat); got {value!r}")
        if derivative is None or not callable(derivative):
            raise TypeError("CustomLoss needs derivative=..., the derivative d l(y, yhat) / d yhat (a callable); "
                            "the iterative solver is gradient based. For a loss without derivative use a smooth "
                            "surrogate (e.g. LogCosh(gamma) for the absolute loss)")
        if second_derivative is not None and not callable(second_derivative):
            raise TypeError(f"second_derivative must be a callable or None, got {second_derivative!r}")
        self._value = value
        self._derivative = derivative
        self._second = second_derivative
        self.name = str(name)

    def __repr__(self) -> str:
        return f"CustomLoss(name={self.name!r})"

    def value(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """The user's ``value(y, yhat)`` as a float array."""
        return np.broadcast_to(np.asarray(self._value(y, yhat), dtype=float), np.shape(yhat))

    def derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """The user's ``derivative(y, yhat)`` as a float array."""
        return np.broadcast_to(np.asarray(self._derivative(y, yhat), dtype=float), np.shape(yhat))

    def second_derivative(self, y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        """The user's second derivative, or a central difference of the derivative."""
        if self._second is None:
            return super().second_derivative(y, yhat)
        return np.broadcast_to(np.asarray(self._second(y, yhat), dtype=float), np.shape(yhat))


_NAMES: dict[str, tuple[type[GroundLoss], str | None]] = {
    "square": (Square, None),
    "squared": (Square, None),
    "l2": (Square, None),
    "logcosh": (LogCosh, "gamma"),
    "huber": (Huber, "delta"),
    "pseudo_huber": (PseudoHuber, "delta"),
    "pseudohuber": (PseudoHuber, "delta"),
}


def make_loss(spec: Any = "square", **kwargs: Any) -> GroundLoss:
    """A ground loss from a name, a ``"name(parameter)"`` string or a :class:`GroundLoss`.

    Parameters
    ----------
    spec : None, str or GroundLoss
        ``"square"`` (also ``"squared"``, ``"l2"``; ``None`` is the square loss too),
        ``"logcosh"``, ``"huber"``, ``"pseudo_huber"``, or with
        the parameter in brackets: ``"logcosh(5)"`` (``gamma = 5``),
        ``"huber(0.1)"`` (``delta = 0.1``). A :class:`GroundLoss` is returned
        unchanged.
    **kwargs
        Parameters of the named loss (``gamma=``, ``delta=``).

    Examples
    --------
    >>> make_loss("logcosh(5)")
    LogCosh(gamma=5.0)
    >>> make_loss("huber", delta=0.5)
    Huber(delta=0.5)
    >>> make_loss(None), make_loss("L2")
    (Square(), Square())
    >>> make_loss("absolute")
    Traceback (most recent call last):
    ...
    ValueError: unknown loss 'absolute'; use one of 'square', 'logcosh', 'huber', 'pseudo_huber' ...
    """
    if spec is None:
        spec = "square"
    if isinstance(spec, GroundLoss):
        if kwargs:
            raise TypeError(f"loss parameters {sorted(kwargs)} given with a loss object {spec!r}; set them on it")
        return spec
    if callable(spec):
        raise TypeError("a loss must be a name or a GroundLoss; wrap a function as "
                        "fdakpl.losses.CustomLoss(value, derivative)")
    if not isinstance(spec, str):
        raise TypeError(f"loss must be a name such as 'logcosh' or a GroundLoss, got {type(spec).__name__}")
    match = re.fullmatch(r"\s*([A-Za-z_\-][A-Za-z0-9_\-]*)\s*(?:\(\s*([^()]*?)\s*\))?\s*", spec)
    key = match.group(1).lower().replace("-", "_") if match else spec
    if not match or key not in _NAMES:
        raise ValueError(f"unknown loss {spec!r}; use one of 'square', 'logcosh', 'huber', 'pseudo_huber' "
                         "(optionally with a parameter, e.g. 'logcosh(5)') or a fdakpl.losses.GroundLoss")
    cls, param = _NAMES[key]
    if match.group(2):
        if param is None:
            raise ValueError(f"the {key} loss has no parameter; got {spec!r}")
        try:
            kwargs[param] = float(match.group(2))
        except ValueError:
            raise ValueError(f"cannot read the {param} of loss {spec!r}; write e.g. '{key}(2.5)'") from None
    return cls(**kwargs)


def is_square(loss: Any) -> bool:
    """Whether ``loss`` is the square loss: the one place fdakpl decides it (closed forms, ``approx=``, centring).

    ``None`` (read as the default, the square loss), the names ``"square"``, ``"squared"`` and ``"l2"`` (any case,
    as :func:`make_loss` reads them) and :class:`Square` objects are the square loss. :class:`Square`
    has no parameter (no scale: the square loss is unit-equivariant as it is), so every instance is
    the same loss. Robust losses are not, whatever their parameters (``LogCosh(gamma)`` only tends
    to a multiple of it as ``gamma -> 0``), and neither is a :class:`CustomLoss`, even a quadratic
    one: fdakpl cannot tell what user code computes. Anything :func:`make_loss` refuses raises its
    error.

    Examples
    --------
    >>> [is_square(x) for x in (None, "square", "l2", "L2", Square())]
    [True, True, True, True, True]
    >>> is_square("logcosh"), is_square(Huber(0.5))
    (False, False)
    >>> is_square("absolute")
    Traceback (most recent call last):
    ...
    ValueError: unknown loss 'absolute'; use one of 'square', 'logcosh', 'huber', 'pseudo_huber' ...
    """
    return make_loss(loss).is_square
