"""Term importance (fdakpl.results.importance): drop and permutation increases of the leave-one-curve-out error."""

import numpy as np
import pytest

from fdakpl import FunctionalRegression, Gaussian, datasets


@pytest.fixture(scope="module")
def fit():
    ds, _ = datasets.make_linear_surface(60, m_in=20, m_out=25, noise=0.3, random_state=3)
    rng = np.random.default_rng(4)
    ds["noise"] = (("sample", "u"), np.cumsum(rng.normal(size=(60, 12)), axis=1))
    ds = ds.assign_coords(u=np.linspace(0, 1, 12))
    ds["z"] = ("sample", rng.normal(size=60))
    kernels = {"x": Gaussian(3.0), "noise": Gaussian(3.0), "scalars": Gaussian(2.0)}
    res = FunctionalRegression("y ~ x + noise + z", ds, kernels=kernels, combine="sum", dictionary="fourier",
                               lam="loo", lam_grid=np.geomspace(1e-6, 1, 19), progress=False).fit()
    return ds, kernels, res


def test_true_term_large_noise_terms_near_zero(fit):
    _, _, res = fit
    imp = res.term_importance(n_permutations=49)
    frame = imp.to_frame()
    assert frame.loc["x", "rel_increase_perm"] > 1.0  # permuting the true input more than doubles the LOO error
    assert frame.loc["x", "delta_LOO_drop"] > 0.5 * imp.loo
    assert frame.loc["x", "p_value"] == pytest.approx(1 / 50)
    for t in ("noise", "z"):  # the scalar covariate has its own row (named by its column)
        assert abs(frame.loc[t, "rel_increase_perm"]) < 0.05
        assert frame.loc[t, "delta_LOO_drop"] < 0.05 * imp.loo  # negative: the useless term only adds variance
        assert frame.loc[t, "p_value"] > 0.05  # not significant (the null p-value is uniform)


def test_permutations_agree_with_permutation_test(fit):
    _, _, res = fit
    imp = res.term_importance(n_permutations=9, random_state=7)
    for i, t in enumerate(imp.terms):
        ref = res.permutation_test(t, n_permutations=9, random_state=7, progress=False)
        assert imp.loo == pytest.approx(ref.statistic, rel=1e-10)
        assert imp.p_value[i] == ref.pvalue
        assert imp.delta_perm[i] == pytest.approx(np.mean(ref.null_distribution) - ref.statistic, rel=1e-8)


def test_drop_importance_equals_refit_without_the_term(fit):
    ds, kernels, res = fit
    imp = res.term_importance(n_permutations=0)
    assert np.all(np.isnan(imp.p_value))
    grid = res.lam_grid

    def best_loo(formula, ks):
        r = FunctionalRegression(formula, ds, kernels=ks, combine="sum", dictionary="fourier", lam="loo",
                                 lam_grid=grid, progress=False).fit()
        return float(np.min(r.criteria.loo))

    full = best_loo("y ~ x + noise + z", kernels)
    reduced = best_loo("y ~ noise + z", {k: v for k, v in kernels.items() if k != "x"})
    assert imp.delta_drop[imp.terms.index("x")] == pytest.approx(reduced - full, rel=1e-8)


def test_summary_importance_options(fit):
    _, _, res = fit
    res._cache.pop("importance", None)  # the fixture is shared: start from a fit where nothing was asked
    text = str(res.summary())  # the summary formats what was computed: importance only on request
    assert "Term importance and p-values: res.term_importance() or summary(importance=True)" in " ".join(text.split())
    assert "5 permutations" in str(res.summary(importance=5))  # computed once, kept
    assert "5 permutations" in str(res.summary())  # "auto" shows what was computed last
    assert "Term importance" not in str(res.summary(importance=False))
    assert "199 permutations" in str(res.summary(importance=True))
    with pytest.raises(ValueError, match="importance must be"):
        res.summary(importance="yes")
    with pytest.raises(ValueError, match="n_permutations"):
        res.term_importance(n_permutations=-1)
