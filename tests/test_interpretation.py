"""Coefficient and effect surfaces, partial dependence (fdakpl.results.interpretation)."""

import numpy as np
import pytest
import xarray as xr

from fdakpl import (
    FunctionalRegression,
    Gaussian,
    IntegralGaussian,
    Laplace,
    Linear,
    PenalizedLinear,
    SmoothedLinear,
    Wavelet,
    datasets,
)
from fdakpl.data.functional import quadrature_weights
from fdakpl.kernels import ScaleDecay, grid_from_weights


@pytest.fixture(scope="module")
def sim():
    ds, beta = datasets.make_linear_surface(40, m_in=25, m_out=24, random_state=1)
    rng = np.random.default_rng(2)
    ds["z"] = ("sample", rng.normal(size=40))
    ds["g"] = ("sample", rng.choice(["a", "b", "c"], size=40))
    ds["x2"] = (("sample", "s2"), np.cumsum(rng.normal(size=(40, 15)), axis=1) / 4)
    ds = ds.assign_coords(s2=np.linspace(0, 2, 15))
    return ds, beta


def _linear_part(ds, res, terms, reference=None):
    """mu(t) + sum over terms of sum_p w_p x(s_p) beta(s_p, t)."""
    out = res.mean_function.values.copy()
    for t in terms:
        beta = res.coefficient_surface(t, reference=reference)
        grid = ds[t][next(d for d in ds[t].dims if d != "sample")].values
        out = out + (ds[t].values * quadrature_weights(grid)) @ beta.values
    return out


def _rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("dictionary", ["fourier", "bspline", Wavelet("db3", level=3)])
@pytest.mark.parametrize("B", [None, 1.5])
@pytest.mark.parametrize("missing", [False, True])
def test_coefficient_surface_reproduces_predictions(sim, dictionary, B, missing):
    ds, _ = sim
    if missing:
        y = ds["y"].values.copy()
        y[np.random.default_rng(0).uniform(size=y.shape) < 0.3] = np.nan
        y[:, 0] = ds["y"].values[:, 0]
        ds = ds.assign(y=(("sample", "t"), y))
    res = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, dictionary=dictionary, output_matrix=B,
                               lam=1e-3, progress=False).fit()
    beta = res.coefficient_surface("x")
    assert beta.dims == ("s", "t") and beta.shape == (25, 24)
    assert _rel(_linear_part(ds, res, ["x"]), res.fitted.values) < 1e-8
    new = datasets.make_linear_surface(7, m_in=25, m_out=24, random_state=9)[0]
    assert _rel(_linear_part(new, res, ["x"]), res.predict(new).values) < 1e-8


def test_coefficient_surface_sum_of_linear_terms_and_smoothed(sim):
    ds, _ = sim
    res = FunctionalRegression("y ~ x + x2", ds, kernels={"x": SmoothedLinear(0.08), "x2": Linear()},
                               combine="sum", dictionary="fourier", output_matrix=ScaleDecay(1.2), lam=1e-2,
                               progress=False).fit()
    assert _rel(_linear_part(ds, res, ["x", "x2"]), res.fitted.values) < 1e-8
    assert res.coefficient_surface("x2").dims == ("s2", "t")


def test_coefficient_surface_product_with_scalars_at_reference(sim):
    ds, _ = sim
    res = FunctionalRegression("y ~ x + z + C(g)", ds, kernels={"x": Linear()}, dictionary="fourier", lam=1e-2,
                               progress=False).fit()
    one = ds.isel(sample=[3])
    beta = res.coefficient_surface("x", reference=one)
    assert beta.attrs["reference"].startswith("scalars: given")
    assert _rel(_linear_part(one, res, ["x"], reference=one), res.predict(one).values) < 1e-8
    default = res.coefficient_surface("x")
    assert "average covariate profile" in default.attrs["reference"]
    with pytest.raises(ValueError, match="Linear, SmoothedLinear or PenalizedLinear"):
        FunctionalRegression("y ~ x", ds, progress=False, lam=1e-2).fit().coefficient_surface("x")
    with pytest.raises(ValueError, match="not a functional term"):
        res.coefficient_surface("z")


def test_grid_from_weights_inverts_quadrature():
    grid = np.sort(np.random.default_rng(0).uniform(0, 3, 30))
    got = grid_from_weights(quadrature_weights(grid))
    assert np.allclose(got, grid - grid[0], atol=1e-10)
    with pytest.raises(ValueError, match="trapezoidal"):
        grid_from_weights(np.ones(5))


def _fd_check(ds, res, term, rtol, n_dirs=3, eps=1e-5):
    """Average over the training curves of the central difference of predictions along random directions."""
    eff = res.effect_surface(term)
    per = res.effect_surface(term, average=False)
    assert np.allclose(per.mean("sample").values, eff.values, rtol=1e-10, atol=1e-12)
    dim = next(d for d in ds[term].dims if d != "sample")
    w = quadrature_weights(ds[dim].values)
    rng = np.random.default_rng(5)
    for _ in range(n_dirs):
        v = np.cumsum(rng.normal(size=ds.sizes[dim])) / np.sqrt(ds.sizes[dim])  # rough direction
        scale = float(np.abs(ds[term].values).max())
        h = eps * scale
        up = ds.assign({term: ds[term] + h * v})
        down = ds.assign({term: ds[term] - h * v})
        fd = (res.predict(up).values - res.predict(down).values) / (2 * h)
        want = (v * w) @ per.values  # (sample, t)
        assert _rel(want, fd) < rtol
        assert _rel((v * w) @ eff.values, fd.mean(axis=0)) < rtol


@pytest.mark.parametrize("kernel", [Gaussian(0.8), Laplace(1.5), Linear(), SmoothedLinear(0.1),
                                    PenalizedLinear(null_weight=1e2), IntegralGaussian(1.0)], ids=repr)
def test_effect_surface_matches_finite_differences(sim, kernel):
    ds, _ = sim
    res = FunctionalRegression("y ~ x + z", ds, kernels={"x": kernel}, dictionary="fourier", lam=1e-2,
                               progress=False).fit()
    _fd_check(ds, res, "x", rtol=1e-5)


def test_effect_surface_sum_and_two_curves(sim):
    ds, _ = sim
    res = FunctionalRegression("y ~ x + x2", ds, kernels={"x": Gaussian(1.0), "x2": Laplace(1.0)}, combine="sum",
                               dictionary="bspline", lam=1e-2, progress=False).fit()
    _fd_check(ds, res, "x2", rtol=1e-5)


def test_effect_surface_equals_coefficient_surface_for_linear_kernel(sim):
    ds, _ = sim
    # PenalizedLinear at null_weight 1e2: its surface matrix has condition number ~1e6 (~1e8 at the default
    # 1e4, which costs ~1e-11 relative accuracy, more than these tolerances)
    for k in (Linear(), SmoothedLinear(0.05), PenalizedLinear(null_weight=1e2)):
        res = FunctionalRegression("y ~ x", ds, kernels={"x": k}, dictionary="fourier", lam=1e-2,
                                   progress=False).fit()
        a, b = res.effect_surface("x"), res.coefficient_surface("x")
        assert np.allclose(a.values, b.values, rtol=1e-10, atol=1e-12 * np.abs(b.values).max())


def test_partial_dependence_equals_brute_force(sim):
    ds, _ = sim
    res = FunctionalRegression("y ~ x + z + C(g)", ds, dictionary="fourier", lam=1e-2, progress=False).fit()
    pd_g = res.partial_dependence("g")
    assert pd_g.dims == ("value", "t") and list(pd_g["value"].values) == ["a", "b", "c"]
    pd_z = res.partial_dependence("z", [-1.0, 0.5])
    for var, pdv in (("g", pd_g), ("z", pd_z)):
        for k, val in enumerate(pdv["value"].values):
            curves = []
            for i in range(ds.sizes["sample"]):  # one sample at a time, its value replaced
                one = ds.isel(sample=[i]).copy()
                one[var] = ("sample", np.array([val], dtype=ds[var].dtype if var == "g" else float))
                curves.append(res.predict(one).values[0])
            assert np.allclose(pdv.values[k], np.mean(curves, axis=0), rtol=1e-12, atol=1e-12)
    default_z = res.partial_dependence("z")
    assert default_z.sizes["value"] == 11
    with pytest.raises(ValueError, match="not a scalar covariate"):
        res.partial_dependence("x")
    with pytest.raises(ValueError, match="were not seen"):
        res.partial_dependence("g", ["zzz"])


def test_surfaces_refuse_approximate_fits(sim):
    from fdakpl import Nystroem

    ds, _ = sim
    res = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, approx=Nystroem(10, random_state=0),
                               lam=1e-2, progress=False).fit()
    with pytest.raises(ValueError, match="exact"):
        res.coefficient_surface("x")


def test_effect_surface_dataarray_labels(sim):
    ds, _ = sim
    res = FunctionalRegression("y ~ x", ds, lam=1e-2, progress=False).fit()
    per = res.effect_surface("x", newdata=ds.isel(sample=[0, 1]), average=False)
    assert per.dims == ("sample", "s", "t")
    assert list(per["sample"].values) == [0, 1]
    assert isinstance(per, xr.DataArray)


def test_select_smoothing_chooses_by_the_criterion_and_smooths(sim):
    from fdakpl.results.surface_inference import select_smoothing

    ds, beta_true = sim
    model = FunctionalRegression("y ~ x", ds, dictionary="bspline", lam="gcv", progress=False)
    res, path = select_smoothing(model, "x", bandwidths=[0.0, 0.02, 0.05, 0.1])
    best = path.loc[path["criterion"].idxmin()]
    assert res.estimator.kernel_.kernels["x"] == SmoothedLinear(best["bandwidth"])
    assert float(np.min(res.criteria.gcv)) == pytest.approx(best["criterion"], rel=1e-12)
    for bw, crit in zip(path["bandwidth"], path["criterion"], strict=True):  # each row is that bandwidth's fit
        m = FunctionalRegression("y ~ x", ds, kernels={"x": SmoothedLinear(bw)}, dictionary="bspline", lam="gcv",
                                 progress=False)
        assert float(np.min(m.fit().criteria.gcv)) == pytest.approx(crit, rel=1e-10)
    assert any("bandwidth" in n for n in res.notes)
    plain = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, dictionary="bspline", progress=False).fit()

    def roughness(b):  # mean squared second difference along s
        return float(np.mean(np.diff(b.values, 2, axis=0) ** 2))

    if best["bandwidth"] > 0:
        assert roughness(res.coefficient_surface("x")) < 0.5 * roughness(plain.coefficient_surface("x"))
    with pytest.raises(ValueError, match=">= 0"):
        select_smoothing(model, "x", bandwidths=[-1.0])


def test_surface_bands_bootstrap_replicates_are_refits(sim):
    from fdakpl.results.surface_inference import surface_bands

    ds, _ = sim
    res = FunctionalRegression("y ~ x + z", ds, kernels={"x": Linear()}, dictionary="bspline", lam=1e-2,
                               progress=False).fit()
    basic = surface_bands(res, "x", n_boot=30, alpha=0.1, random_state=3)
    pct = surface_bands(res, "x", n_boot=30, alpha=0.1, method="percentile", random_state=3)
    est = basic.estimate.values
    assert np.allclose(est, res.coefficient_surface("x").values)
    # basic = reflection of the percentile interval around the estimate, same replicates
    assert np.allclose(basic.lower.values, 2 * est - pct.upper.values)
    assert np.allclose(basic.sd.values, pct.sd.values)
    # two replicates by hand: refits of "y ~ x" on curves resampled with the same generator
    one = FunctionalRegression("y ~ x", ds, kernels={"x": Linear()}, dictionary="bspline", lam=1e-2,
                               progress=False).fit()
    two = surface_bands(one, "x", n_boot=2, random_state=11)
    rng = np.random.default_rng(11)
    reps = []
    for _ in range(2):
        sub = ds.isel(sample=rng.integers(0, 40, 40)).assign_coords(sample=np.arange(40))
        reps.append(FunctionalRegression("y ~ x", sub, kernels={"x": Linear()}, dictionary="bspline", lam=1e-2,
                                         progress=False).fit().coefficient_surface("x").values)
    assert np.allclose(two.sd.values, np.abs(reps[0] - reps[1]) / np.sqrt(2), rtol=1e-8, atol=1e-12)
    assert bool((basic.sd > 0).all())
    with pytest.raises(ValueError, match="method"):
        surface_bands(res, "x", method="normal")


def test_plots(sim):
    from fdakpl.results.interpretation_plots import plot_surface
    from fdakpl.results.surface_inference import surface_bands

    ds, _ = sim
    res = FunctionalRegression("y ~ x + C(g)", ds, kernels={"x": Linear()}, dictionary="bspline", lam=1e-2,
                               progress=False).fit()
    fig = res.plot_surface("x")
    assert fig.axes[0].get_xlabel() == "s" and "coefficient" in fig.axes[0].get_title()
    bands = surface_bands(res, "x", n_boot=5)
    assert len(plot_surface(res.coefficient_surface("x"), bands).axes) == 4
    fig = res.plot_surface("x", kind="effect")
    title = fig.axes[0].get_title()
    assert "effect" in title and "))" not in title  # name: kind, never doubled parentheses
    assert fig.axes[-1].get_ylabel().startswith("effect_x")  # the colour bar says what it measures
    assert all(f.axes[-1].get_ylabel() for f in (res.plot_surface("x"), plot_surface(res.coefficient_surface("x"),
                                                                                      bands)))
    assert [t.get_text() for t in res.plot_partial_dependence("g").axes[0].get_legend().get_texts()] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="kind"):
        res.plot_surface("x", kind="heat")


def test_smoothed_linear_fit_saves_and_loads(sim, tmp_path):
    import fdakpl

    ds, _ = sim
    res = FunctionalRegression("y ~ x", ds, kernels={"x": SmoothedLinear(0.05)}, dictionary="bspline", lam=1e-2,
                               progress=False).fit()
    again = fdakpl.load(res.save(tmp_path / "smoothed.nc"))
    assert np.array_equal(again.predict().values, res.predict().values)
    assert np.allclose(again.coefficient_surface("x").values, res.coefficient_surface("x").values, rtol=1e-12)
