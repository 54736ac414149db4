"""Ground losses: derivatives against finite differences, stable logcosh, bad input."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from fdakpl.losses import CustomLoss, GroundLoss, Huber, LogCosh, PseudoHuber, Square, make_loss

LOSSES = [Square(), LogCosh(0.5), LogCosh(5.0), LogCosh(50.0), Huber(0.3), PseudoHuber(0.3),
          CustomLoss(lambda y, f: (f - y) ** 4 + np.sin(f), lambda y, f: 4 * (f - y) ** 3 + np.cos(f), name="quartic")]


def _points(rng, loss):
    y = rng.normal(size=40)
    yhat = y + rng.normal(scale=0.7, size=40)
    if isinstance(loss, Huber):  # keep away from the kink |a| = delta, where l'' jumps
        a = yhat - y
        keep = np.abs(np.abs(a) - loss.delta) > 1e-3
        y, yhat = y[keep], yhat[keep]
    return y, yhat


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_derivatives_match_finite_differences(rng, loss):
    y, yhat = _points(rng, loss)
    total = lambda f: float(np.sum(loss.value(y, f)))  # noqa: E731  (separable: gradient = elementwise derivative)
    fd = approx_fprime(yhat, total, 1e-7)
    np.testing.assert_allclose(loss.derivative(y, yhat), fd, rtol=1e-5, atol=1e-5)
    deriv_sum = lambda f: float(np.sum(loss.derivative(y, f)))  # noqa: E731
    fd2 = approx_fprime(yhat, deriv_sum, 1e-7)
    np.testing.assert_allclose(loss.second_derivative(y, yhat), fd2, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(fd2).max()))


def test_custom_loss_default_second_derivative_is_central_difference(rng):
    loss = CustomLoss(lambda y, f: np.exp(f - y), lambda y, f: np.exp(f - y))
    y, f = rng.normal(size=10), rng.normal(size=10)
    np.testing.assert_allclose(loss.second_derivative(y, f), np.exp(f - y), rtol=1e-8)


def test_logcosh_is_stable_and_matches_the_naive_formula_where_that_is_finite():
    a = np.concatenate([np.linspace(-30, 30, 121), [-1e8, 1e8, 1e300]])
    for gamma in [0.25, 1.0, 25.0]:
        loss = LogCosh(gamma)
        v = loss.value(np.zeros_like(a), a)
        assert np.all(np.isfinite(v))
        with np.errstate(over="ignore"):
            naive = np.log(np.cosh(gamma * a)) / gamma
        ok = np.isfinite(naive)
        assert ok.sum() > 50 and not ok.all()
        np.testing.assert_allclose(v[ok], naive[ok], rtol=1e-12, atol=1e-12)
        # |a| - log 2 / gamma <= logcosh <= |a| (the bounds behind "large gamma approaches the absolute loss")
        assert np.all(v <= np.abs(a) * (1 + 1e-15)) and np.all(v >= np.abs(a) - np.log(2) / gamma - 1e-12 * np.abs(a))
        np.testing.assert_allclose(loss.derivative(np.zeros(2), np.array([-1e300, 1e300])), [-1.0, 1.0])
        assert np.all(np.isfinite(loss.second_derivative(np.zeros_like(a), a)))


def test_logcosh_small_residuals_are_quadratic():
    a = np.array([1e-6, -3e-5])
    np.testing.assert_allclose(LogCosh(4.0).value(np.zeros(2), a), 4.0 * a ** 2 / 2, rtol=1e-8)


def test_huber_and_pseudo_huber_formulas():
    a = np.array([-3.0, -0.5, 0.0, 0.2, 2.0])
    d = 0.5
    np.testing.assert_allclose(Huber(d).value(np.zeros(5), a), np.where(np.abs(a) <= d, a ** 2 / 2,
                                                                        d * (np.abs(a) - d / 2)))
    np.testing.assert_allclose(PseudoHuber(d).value(np.zeros(5), a), d ** 2 * (np.sqrt(1 + (a / d) ** 2) - 1),
                               rtol=1e-12, atol=1e-15)
    # continuity of the Huber loss and its derivative at the kink
    h = Huber(d)
    for side in [d - 1e-12, d + 1e-12]:
        np.testing.assert_allclose(h.value(np.zeros(1), np.array([side])), d ** 2 / 2, rtol=1e-9)
        np.testing.assert_allclose(h.derivative(np.zeros(1), np.array([side])), d, rtol=1e-9)


def test_losses_depend_on_the_residual_only_and_square_is_the_functional_square_loss(rng):
    y, f = rng.normal(size=7), rng.normal(size=7)
    for loss in LOSSES[:-1]:
        np.testing.assert_allclose(loss.value(y, f), loss.value(y + 3.0, f + 3.0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(Square().value(y, f), (f - y) ** 2)


def test_make_loss_names_and_parameters():
    assert make_loss("square") == Square()
    assert make_loss("logcosh") == LogCosh(1.0)
    assert make_loss(" logcosh( 2.5 ) ") == LogCosh(2.5)
    assert make_loss("LogCosh", gamma=3) == LogCosh(3.0)
    assert make_loss("pseudo-huber(0.2)") == PseudoHuber(0.2)
    assert make_loss("huber(1e-1)") == Huber(0.1)
    loss = LogCosh(7.0)
    assert make_loss(loss) is loss
    assert isinstance(loss, GroundLoss)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_nonpositive_or_nonfinite_gamma_is_refused(bad):
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        LogCosh(bad)
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        make_loss(f"logcosh({bad})")
    with pytest.raises(ValueError, match="delta must be a finite number > 0"):
        Huber(bad)
    with pytest.raises(ValueError, match="delta must be a finite number > 0"):
        PseudoHuber(bad)


def test_bad_loss_specifications():
    with pytest.raises(TypeError, match="gamma must be a number"):
        LogCosh("5")
    with pytest.raises(TypeError, match="needs derivative"):
        CustomLoss(lambda y, f: np.abs(f - y), None)
    with pytest.raises(TypeError, match="needs value"):
        CustomLoss(None, lambda y, f: np.sign(f - y))
    with pytest.raises(TypeError, match="wrap a function"):
        make_loss(lambda y, f: (f - y) ** 2)
    with pytest.raises(ValueError, match="unknown loss 'absolute'"):
        make_loss("absolute")
    with pytest.raises(ValueError, match="has no parameter"):
        make_loss("square(2)")
    with pytest.raises(ValueError, match="cannot read the gamma"):
        make_loss("logcosh(abc)")
    with pytest.raises(TypeError, match="set them on it"):
        make_loss(LogCosh(2.0), gamma=3.0)
    with pytest.raises(TypeError, match="must be a name"):
        make_loss(3)
