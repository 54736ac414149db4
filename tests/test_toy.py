"""The paper's toy data generator and corruptions."""

import numpy as np
import pytest

from fdakpl.datasets import corrupt, make_toy, noise_for_snr, signal_to_noise


def _cardinal_cubic(t):
    """Cardinal cubic B-spline on [0, 4] from its piecewise polynomial form (de Boor)."""
    t = np.asarray(t, dtype=float)
    out = np.zeros_like(t)
    p = [(0 <= t) & (t < 1), (1 <= t) & (t < 2), (2 <= t) & (t < 3), (3 <= t) & (t <= 4)]
    out[p[0]] = t[p[0]] ** 3 / 6
    out[p[1]] = (-3 * t[p[1]] ** 3 + 12 * t[p[1]] ** 2 - 12 * t[p[1]] + 4) / 6
    out[p[2]] = (3 * t[p[2]] ** 3 - 24 * t[p[2]] ** 2 + 60 * t[p[2]] - 44) / 6
    out[p[3]] = (4 - t[p[3]]) ** 3 / 6
    return out


def test_make_toy_structure_inputs_and_outputs():
    ds = make_toy(300, n_locations=200, random_state=1)
    assert ds.x.dims == ("sample", "zeta") and ds.y.dims == ("sample", "theta")
    zeta, a = ds.zeta.values, ds.coef.values
    assert zeta[0] == 0 and zeta[-1] == 5 and ds.theta.values[-1] == 1
    assert a.min() >= -1 and a.max() <= 1 and abs(a.mean()) < 0.05
    bumps = np.stack([_cardinal_cubic(4 * (zeta - t) + 2) for t in (1, 2, 3, 4)])
    resid = ds.x.values - a @ bumps
    assert abs(resid.std() - 0.07) < 0.002 and abs(resid.mean()) < 0.002
    np.testing.assert_allclose(ds.y.values, a @ ds.gp.values, rtol=1e-12, atol=1e-12)
    # the Gaussian processes are fixed: same for another sample seed, different for another GP seed
    other = make_toy(5, n_locations=200, random_state=7)
    np.testing.assert_array_equal(other.gp.values, ds.gp.values)
    assert not np.allclose(make_toy(5, n_locations=200, gp_random_state=3).gp.values, ds.gp.values)
    np.testing.assert_array_equal(make_toy(5, random_state=7).x.values, other.x.values)


def test_gaussian_processes_have_the_stated_covariances():
    theta = np.linspace(0, 1, 25)
    draws = np.stack([make_toy(1, n_locations=25, gp_random_state=s).gp.values for s in range(600)])
    for comp, b in enumerate((0.1, 0.25)):
        emp = draws[:, comp].T @ draws[:, comp] / draws.shape[0]
        expected = np.exp(-((theta[:, None] - theta[None, :]) ** 2) / b**2)
        assert np.abs(emp - expected).max() < 0.2


def test_corruptions():
    ds = make_toy(40, n_locations=50, random_state=0)
    y = ds.y.values
    # missing: exactly round(level * m) points removed per curve
    miss = corrupt(ds, "missing", 0.3, random_state=0)
    np.testing.assert_array_equal(miss.y.notnull().sum("theta").values, np.full(40, 35))
    np.testing.assert_array_equal(miss.y_corrupted.values, miss.y.isnull().values)
    np.testing.assert_array_equal(miss.y.values[miss.y.notnull().values], y[miss.y.notnull().values])
    # local outliers: a fraction of points replaced by draws within the range
    out = corrupt(ds, "local_outliers", 0.1, random_state=1)
    changed = out.y_corrupted.values
    assert changed.sum() == 200
    np.testing.assert_array_equal(out.y.values[~changed], y[~changed])
    assert out.y.values[changed].min() >= y.min() and out.y.values[changed].max() <= y.max()
    # label noise: whole curves replaced by other samples' curves
    lab = corrupt(ds, "label_noise", 0.25, random_state=2)
    rows = np.nonzero(lab.y_corrupted.values.any(axis=1))[0]
    assert rows.size == 10
    for i in rows:
        match = [j for j in range(40) if np.array_equal(lab.y.values[i], y[j])]
        assert match and i not in match
    np.testing.assert_array_equal(np.delete(lab.y.values, rows, 0), np.delete(y, rows, 0))
    # noise: Gaussian with the given standard deviation, and the paper's SNR
    noisy = corrupt(ds, "noise", 0.2, random_state=3)
    assert abs((noisy.y.values - y).std() - 0.2) < 0.01
    snr = np.mean([np.mean(np.abs(row)) for row in y]) / 0.2
    assert noisy.attrs["snr"] == pytest.approx(snr, rel=1e-12)
    assert signal_to_noise(ds.y, noise_for_snr(ds.y, 3.0)) == pytest.approx(3.0)
    # corruptions compose: noise on partially observed curves keeps NaN where unobserved
    both = corrupt(miss, "noise", 0.1, random_state=4)
    np.testing.assert_array_equal(both.y.isnull().values, miss.y.isnull().values)


def test_corrupt_errors():
    ds = make_toy(5, n_locations=10, random_state=0)
    with pytest.raises(ValueError, match="unknown corruption"):
        corrupt(ds, "outliers!", 0.1)
    with pytest.raises(ValueError, match="fraction"):
        corrupt(ds, "label_noise", 1.5)
    with pytest.raises(ValueError, match="at least one point"):
        corrupt(ds, "missing", 1.0)
    with pytest.raises(ValueError, match="no variable"):
        corrupt(ds, "noise", 0.1, var="z")
