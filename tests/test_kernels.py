import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel

from fdakpl.kernels import (
    Gaussian,
    Identity,
    IntegralGaussian,
    Laplace,
    Linear,
    Matrix,
    Product,
    ScaleDecay,
    Sum,
    check_spd,
    make_output_matrix,
)


def test_vector_kernels_against_scikit_learn(rng):
    X, Y = rng.normal(size=(7, 4)), rng.normal(size=(5, 4))
    np.testing.assert_allclose(Gaussian(1.3)(X, Y), rbf_kernel(X, Y, gamma=1 / (2 * 1.3**2)), rtol=1e-12)
    np.testing.assert_allclose(Linear()(X, Y), linear_kernel(X, Y), rtol=1e-12)
    d = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1))
    np.testing.assert_allclose(Laplace(0.7)(X, Y), np.exp(-d / 0.7), rtol=1e-12)


def test_curve_kernels_use_quadrature_weights(rng):
    X = rng.normal(size=(4, 6))
    w = rng.uniform(0.1, 1.0, size=6)
    d2 = (((X[:, None] - X[None]) ** 2) * w).sum(-1)
    np.testing.assert_allclose(Gaussian(0.5)(X, None, w), np.exp(-d2 / 0.5), rtol=1e-12)
    np.testing.assert_allclose(Linear()(X, None, w), (X * w) @ X.T, rtol=1e-12)
    with pytest.raises(ValueError, match="weights must have shape"):
        Gaussian(1.0)(X, None, w[:3])


def test_integral_gaussian_is_the_average_of_pointwise_gaussians(rng):
    X, Y = rng.normal(size=(3, 8, 2)), rng.normal(size=(4, 8, 2))
    brute = np.array([[np.mean([np.exp(-np.sum((x[t] - y[t]) ** 2) / 2.0**2) for t in range(8)]) for y in Y]
                      for x in X])
    np.testing.assert_allclose(IntegralGaussian(2.0)(X, Y), brute, rtol=1e-12)


def test_sums_and_products_of_term_kernels(rng):
    A, B = rng.normal(size=(5, 2)), rng.normal(size=(5, 3))
    terms = {"a": A, "b": B}
    np.testing.assert_allclose(Product({"a": Gaussian(1.0), "b": Linear()})(terms),
                               Gaussian(1.0)(A) * Linear()(B), rtol=1e-12)
    np.testing.assert_allclose(Sum({"a": Gaussian(1.0), "b": Laplace(2.0)})(terms),
                               Gaussian(1.0)(A) + Laplace(2.0)(B), rtol=1e-12)
    with pytest.raises(ValueError, match="no term 'b'"):
        Product({"a": Gaussian(1.0), "b": Linear()})({"a": A})
    with pytest.raises(TypeError, match="must be a Kernel"):
        Product({"a": 3})


def test_output_matrices():
    np.testing.assert_allclose(np.diag(ScaleDecay(2.0).matrix(np.array([0, 1, 3]))), [1, 0.5, 0.125])
    np.testing.assert_array_equal(Identity().matrix(np.zeros(3)), np.eye(3))
    assert isinstance(make_output_matrix(None), Identity) and make_output_matrix(1.5).b == 1.5
    with pytest.raises(ValueError, match="not symmetric"):
        check_spd([[1.0, 2.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="not positive definite"):
        check_spd([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="pass a \\(3, 3\\) matrix"):
        Matrix(np.eye(2)).matrix(np.zeros(3))
    with pytest.raises(ValueError, match="sigma must be > 0"):
        Gaussian(0.0)
    with pytest.raises(ValueError, match="b must be > 0"):
        ScaleDecay(-1.0)


def test_gram_of_a_set_is_scipys_pdist_and_exactly_symmetric(rng):
    """Kernels built from distances compute each pair once, with the numbers of scipy's public pdist; their
    matrices (and sums and products of them) are symmetric bit for bit, which the eigendecomposition relies on
    (exact_symmetric); others are not assumed symmetric."""
    from scipy.spatial.distance import pdist, squareform

    from fdakpl.kernels import Gaussian, Laplace, Linear, Product, Sum

    X, w = rng.normal(size=(40, 7)), rng.uniform(0.5, 1.5, size=7)
    for kern, f in [(Gaussian(0.7), lambda d: np.exp(-0.5 * d)), (Laplace(1.3), lambda d: np.exp(-np.sqrt(d)))]:
        for weights in (None, w):
            A = X / kern.sigma if weights is None else X / kern.sigma * np.sqrt(weights)
            K = kern.checked_matrix(X, None, weights)
            np.testing.assert_array_equal(K, f(squareform(pdist(A, "sqeuclidean"))))
            np.testing.assert_array_equal(K, K.T)
            assert kern.exact_symmetric()
    terms = {"a": X, "b": X[:, :3]}
    for comb in (Product({"a": Gaussian(1.0), "b": Laplace(2.0)}), Sum({"a": Gaussian(1.0), "b": Gaussian(0.5)})):
        K = comb.checked_matrix(terms)
        assert comb.exact_symmetric() and np.array_equal(K, K.T)
    assert not Linear().exact_symmetric() and not Product({"a": Gaussian(1.0), "b": Linear()}).exact_symmetric()

    class Own(Gaussian):  # a computation of its own: not known to be symmetric
        def _matrix(self, X, Y, w):
            return super()._matrix(X, Y, w)

    assert not Own(1.0).exact_symmetric()
