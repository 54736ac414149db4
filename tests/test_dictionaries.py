import numpy as np
import pytest
import pywt

from fdakpl.data.functional import Observations
from fdakpl.dictionaries import (
    FPCA,
    BSpline,
    Fourier,
    Learned,
    PiecewiseLinear,
    RandomFourier,
    Wavelet,
    make_dictionary,
)


def _fine_gram(dic, n=200_001):
    """Brute-force Gram matrix by a fine composite Simpson rule."""
    lo, hi = dic.domain_
    t = np.linspace(lo, hi, n)
    w = np.full(n, 2.0)
    w[1:-1:2] = 4.0
    w[0] = w[-1] = 1.0
    w *= (hi - lo) / (n - 1) / 3.0
    phi = dic.evaluate(t)
    return phi.T @ (w[:, None] * phi)


def _obs(rng, n=25, m=50, domain=(0.0, 1.0)):
    grid = np.linspace(*domain, m)
    Y = rng.normal(size=(n, 4)) @ np.vstack([np.sin((k + 1) * np.pi * (grid - domain[0]) / (domain[1] - domain[0]))
                                             for k in range(4)])
    return Observations.from_dense(Y, grid)


@pytest.mark.parametrize(
    "dic, tol",
    [
        (Fourier(5, domain=(0.0, 2.0)), 1e-9),
        (RandomFourier(15, length_scale=0.2, random_state=3, domain=(-1.0, 1.0)), 1e-9),
        (BSpline(12, degree=3, domain=(0.0, 1.0)), 1e-9),
        (BSpline(7, degree=2, domain=(1.0, 3.0)), 1e-9),
        (Wavelet("db3", level=3, resolution=40, domain=(0.0, 1.0)), 1e-6),
        (PiecewiseLinear(grid=[0.1, 0.3, 0.35, 0.9], domain=(0.0, 1.0)), 1e-6),
    ],
)
def test_gram_equals_fine_quadrature(dic, tol):
    dic.fit()
    G = dic.gram()
    np.testing.assert_allclose(G, _fine_gram(dic), atol=tol * max(1.0, np.abs(G).max()))
    assert G.shape == (dic.n_atoms_, dic.n_atoms_) == (dic.scales_.size,) * 2


@pytest.mark.parametrize("dic", [FPCA(3), Learned(4, tau=0.05, random_state=0, progress=False)])
def test_data_dependent_gram_equals_fine_quadrature(rng, dic):
    dic.fit(_obs(rng))
    np.testing.assert_allclose(dic.gram(), _fine_gram(dic), atol=1e-6)


def test_fourier_is_orthonormal_on_any_domain():
    f = Fourier(4, domain=(2.0, 5.0)).fit()
    np.testing.assert_allclose(_fine_gram(f), np.eye(9), atol=1e-9)
    assert f.orthonormal
    np.testing.assert_array_equal(f.scales_, [0, 1, 1, 2, 2, 3, 3, 4, 4])


@pytest.mark.parametrize("wavelet, level, n", [("db3", 4, 55), ("db2", 3, 64), ("sym4", 2, 37), ("haar", 5, 64)])
def test_wavelet_reproduces_pywt_reconstruction(rng, wavelet, level, n):
    w = Wavelet(wavelet, level=level, resolution=n, domain=(0.0, 1.0)).fit()
    signal = rng.normal(size=n)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coeffs = pywt.wavedec(signal, wavelet, mode="symmetric", level=level)
        recon = pywt.waverec(coeffs, wavelet, mode="symmetric")[:n]
    flat, _ = pywt.coeffs_to_array(coeffs)
    ours = w.evaluate(w.grid_) @ flat / w.pywt_scale_
    np.testing.assert_allclose(ours, recon, atol=1e-10)
    np.testing.assert_allclose(ours, signal, atol=1e-10)  # perfect reconstruction
    assert w.scales_.max() == level and w.scales_.min() == 0


def test_wavelet_periodic_mode_is_orthonormal_on_grid():
    w = Wavelet("db2", level=3, mode="periodization", resolution=64, domain=(0.0, 1.0)).fit()
    A = w.evaluate(w.grid_) / w.pywt_scale_
    np.testing.assert_allclose(A.T @ A, np.eye(64), atol=1e-10)


def test_random_fourier_is_seeded():
    a = RandomFourier(10, 0.1, random_state=7, domain=(0, 1)).fit().evaluate([0.3])
    b = RandomFourier(10, 0.1, random_state=7, domain=(0, 1)).fit().evaluate([0.3])
    np.testing.assert_array_equal(a, b)


def test_fpca_recovers_the_generating_space(rng):
    obs = _obs(rng, n=60)
    d = FPCA(4).fit(obs)
    np.testing.assert_allclose(d.gram(), np.eye(4), atol=0.02)
    Y = obs.to_dense()
    t = obs.grid
    P = d.evaluate(t)
    Yc = Y - Y.mean(0)
    coef = np.linalg.lstsq(P, Yc.T, rcond=None)[0]
    assert np.abs(P @ coef - Yc.T).max() < 1e-6 * np.abs(Yc).max() + 0.03
    assert np.all(np.diff(d.explained_variance_) <= 0)


def test_fpca_with_missing_points(rng):
    obs = _obs(rng, n=60)
    Y = obs.to_dense()
    Y[rng.uniform(size=Y.shape) < 0.2] = np.nan
    d = FPCA(3).fit(Observations.from_dense(Y, obs.grid))
    assert np.isfinite(d.gram()).all()


def test_learned_dictionary_constraints_and_descent(rng):
    obs = _obs(rng, n=40)
    d = Learned(6, tau=0.05, random_state=0, max_iter=30, progress=False).fit(obs)
    norms = np.diag(d.gram())
    assert np.all(norms <= 1 + 1e-6)  # atoms in the unit L2 ball (trapezoid norm is exact for P1 up to O(h^2))
    obj = np.array(d.objective_)
    assert np.all(np.diff(obj) <= 1e-9 * obj[0])  # alternating minimisation never increases the objective


def test_domain_errors():
    f = Fourier(2, domain=(0, 1)).fit()
    with pytest.raises(ValueError, match="domain is \\[0, 1\\]"):
        f.evaluate([1.5])
    with pytest.raises(ValueError, match="lo < hi"):
        Fourier(2, domain=(1, 0)).fit()
    with pytest.raises(RuntimeError, match="not set up"):
        Fourier(2).evaluate([0.1])
    with pytest.raises(ValueError, match="unknown dictionary"):
        make_dictionary("nope")
    with pytest.raises(ValueError, match="unknown discrete wavelet"):
        Wavelet("xyz").fit(domain=(0, 1))


def test_make_dictionary_names():
    assert isinstance(make_dictionary("db2", level=3), Wavelet)
    assert make_dictionary("db2", level=3).level == 3
    assert make_dictionary("bspline", n_atoms=9).fit(domain=(0, 1)).n_atoms_ == 9
    assert make_dictionary("fpca", n_atoms=4).n_atoms == 4
    assert make_dictionary("rff", n_atoms=6).fit(domain=(0, 1)).n_atoms_ == 6
    assert isinstance(make_dictionary("fourier", n_freqs=3), Fourier)
    assert isinstance(make_dictionary("fpca"), FPCA)


@pytest.mark.parametrize(("spec", "old", "new"), [("db2", "levels", "level"), ("bspline", "n_basis", "n_atoms"),
                                                  ("fpca", "n_components", "n_atoms"),
                                                  ("rff", "n_features", "n_atoms")])
def test_make_dictionary_refuses_the_old_names_with_the_new_one(spec, old, new):
    with pytest.raises(TypeError, match=f"{old}= was renamed {new}="):
        make_dictionary(spec, **{old: 3})


def test_one_size_name_per_meaning():
    """n_atoms is the number of atoms of every dictionary that has a count of atoms (Fourier counts frequencies)."""
    for cls, kw in ((BSpline, {}), (FPCA, {}), (RandomFourier, {"length_scale": 0.2}), (Learned, {})):
        assert cls(n_atoms=5, **kw).get_params()["n_atoms"] == 5
    assert BSpline(n_atoms=7, domain=(0, 1)).fit().n_atoms_ == 7
    assert Fourier(n_freqs=3, domain=(0, 1)).fit().n_atoms_ == 7  # 2 n_freqs + 1


def test_random_fourier_is_reproducible_by_default():
    a, b = (RandomFourier(8, domain=(0, 1)).fit() for _ in range(2))
    np.testing.assert_array_equal(a.omega_, b.omega_)
    c, d = (RandomFourier(8, random_state=None, domain=(0, 1)).fit() for _ in range(2))
    assert not np.array_equal(c.omega_, d.omega_)
