"""Curve-level tuning (issue 12): exact leave-one-curve-out on every route, joint width / b / lambda choice.

Every criterion value is checked against brute-force refits that leave each curve out (the
Kronecker system, or the primal normal equations), with the mean function held at its
full-data value and the penalty ``n lam`` kept (so the refit on ``n - 1`` curves uses
``lam * n / (n - 1)``).
"""

import re
import warnings

import numpy as np
import pytest
import xarray as xr

from fdakpl import FunctionalRegression, KPLRegressor
from fdakpl.data.functional import Observations, quadrature_weights
from fdakpl.data.integration import integration_weights
from fdakpl.dictionaries import Fourier
from fdakpl.estimators.approx import ApproxKPLRegressor, Nystroem
from fdakpl.formula.terms import median_heuristic
from fdakpl.kernels import Gaussian, Product, ScaleDecay
from fdakpl.ridge.quadratics import curve_quadratics
from fdakpl.solvers.closed_form import brute_force_ridge
from fdakpl.solvers.primal import SufficientStats, primal_decompose
from fdakpl.tuning.criteria import LOO, KFold, edge_notice
from fdakpl.tuning.search import search

from .conftest import make_problem

LAMS = np.array([1e-5, 1e-3, 1e-1])


def _centred(model, Y, grid):
    """The centred points and weights of the fit's integrals (the curves' interpolants with "interpolate")."""
    obs = Observations.from_dense(Y, grid)
    if model.mean_ is not None:
        obs = obs.with_values(obs.value - model.mean_(obs.location))
    if model.integration_ == "interpolate":
        filled = np.stack([np.interp(grid, grid[np.isfinite(r)], r[np.isfinite(r)])
                           for r in obs.to_dense()])  # by hand: linear, constant beyond the ends
        return Observations.from_dense(filled, grid), np.tile(quadrature_weights(grid, (0.0, 1.0)), len(filled))
    w, _ = integration_weights(obs, (0.0, 1.0), model.integration_)
    return obs, w


def _brute_loo_exact(K, G, B, phi, obs, w, lam):
    """Mean over curves of the weighted error of the refit without that curve (Kronecker solve)."""
    n = obs.n_samples
    N = np.zeros((n, phi.shape[1]))
    np.add.at(N, obs.index, (w * obs.value)[:, None] * phi[obs.grid_index])
    errs = []
    for i in range(n):
        keep = np.arange(n) != i
        A = brute_force_ridge(K[np.ix_(keep, keep)], G, B, N[keep], lam * n / (n - 1))
        h = B @ (K[i, keep] @ A)
        on = obs.index == i
        r = obs.value[on] - phi[obs.grid_index[on]] @ h
        errs.append(np.sum(w[on] * r**2))
    return float(np.mean(errs))


@pytest.mark.parametrize("missing, integration", [(0.0, "auto"), (0.3, "plugin"), (0.3, "auto")])
def test_curve_loo_equals_brute_force_refits(rng, missing, integration):
    """Quadrature (fully observed), plug-in and the curves' interpolants (partially observed)."""
    X, Y, grid = make_problem(rng, n=14, m=25, missing=missing)
    model = KPLRegressor(dictionary=Fourier(2), kernel=Gaussian(0.8), output_matrix=1.5, lam=1e-3,
                         integration=integration).fit(X, Y, locations=grid)
    assert model.integration_ == ("quadrature" if not missing else "plugin" if integration == "plugin"
                                  else "interpolate")
    obs, w = _centred(model, Y, grid)
    phi = model.dictionary_.evaluate(grid)
    quad = curve_quadratics(obs, phi, w)
    assert quad.shared == (model.integration_ != "plugin")
    loo = model.path_.loo(LAMS)
    brute = [_brute_loo_exact(model.K_, model.gram_, model.B_, phi, obs, w, lam) for lam in LAMS]
    np.testing.assert_allclose(loo, brute, rtol=1e-8)
    # the criterion object scores the same path with the same numbers
    np.testing.assert_array_equal(LOO().path_scores(model.path_, LAMS), loo)



@pytest.mark.parametrize("missing, integration", [(0.0, "auto"), (0.3, "plugin")])
def test_path_errors_same_in_blocks_of_lambdas(rng, monkeypatch, missing, integration):
    """The lambda path is evaluated in blocks (memory); one lambda per block gives the same training error, edf
    and leave-one-curve-out error as one block for the whole path (shared and per-curve quadratic forms)."""
    from fdakpl.ridge import quadratics

    X, Y, grid = make_problem(rng, n=12, m=20, missing=missing)
    model = KPLRegressor(dictionary=Fourier(2), kernel=Gaussian(0.8), output_matrix=1.5, lam=1e-3,
                         integration=integration).fit(X, Y, locations=grid)
    lams = np.geomspace(1e-6, 1.0, 9)
    whole = model.path_.errors(lams)
    monkeypatch.setattr(quadratics, "_BLOCK_BYTES", 1)  # one lambda per block
    blocks = model.path_.errors(lams)
    for a, b in [(whole.train, blocks.train), (whole.edf, blocks.edf), (whole.loo, blocks.loo)]:
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(b, a, rtol=1e-12)

def test_primal_loo_equals_brute_force_refits(rng):
    """Approximate route: leave-one-curve-out given the feature map, against primal refits without each curve."""
    X, Y, grid = make_problem(rng, n=16, m=20, missing=0.25)
    est = ApproxKPLRegressor(dictionary=Fourier(2), kernel=Gaussian(0.8), output_matrix=1.5, approx=Nystroem(10),
                             lam=LAMS, chunk_size=5, progress=False).fit(X, Y, locations=grid)
    assert est.criterion_ == "loo" and est.lam_ == LAMS[int(np.argmin(est.scores_))]
    Z = est.approx_.transform(X)
    obs, w = _centred(est, Y, grid)
    phi = est.dictionary_.evaluate(grid)
    n = obs.n_samples
    N = np.zeros((n, phi.shape[1]))
    np.add.at(N, obs.index, (w * obs.value)[:, None] * phi[obs.grid_index])
    np.testing.assert_allclose(SufficientStats.from_chunk(Z, N).T, est.stats_.T, rtol=1e-9, atol=1e-12)
    brute = []
    for lam in LAMS:
        errs = []
        for i in range(n):
            keep = np.arange(n) != i
            dec = primal_decompose(SufficientStats.from_chunk(Z[keep], N[keep]), est.gram_, est.B_)
            h = Z[i] @ dec.coef(lam * n / (n - 1))
            on = obs.index == i
            errs.append(np.sum(w[on] * (obs.value[on] - phi[obs.grid_index[on]] @ h) ** 2))
        brute.append(np.mean(errs))
    np.testing.assert_allclose(est.scores_, brute, rtol=1e-7)
    # GCV stays available and chooses from the same statistics
    g = ApproxKPLRegressor(dictionary=Fourier(2), kernel=Gaussian(0.8), approx=Nystroem(10), lam=LAMS,
                           criterion="gcv", progress=False).fit(X, Y, locations=grid)
    assert g.criterion_ == "gcv" and g.lam_ == LAMS[int(np.argmin(g.gcv_))]


def _dataset(X, Y, grid, scalar=None):
    ds = xr.Dataset({"y": (("sample", "t"), Y), "x": (("sample", "s"), X)},
                    coords={"t": grid, "s": np.linspace(0, 1, X.shape[1])})
    if scalar is not None:
        ds["z"] = ("sample", scalar)
    return ds


def _curve_problem(rng, n=16, m=20, missing=0.2):
    Xc = np.cumsum(rng.normal(size=(n, 12)), axis=1) / 4
    grid = np.linspace(0, 1, m)
    Y = np.sin(np.pi * np.outer(Xc[:, -1], grid)) + 0.1 * rng.normal(size=(n, m))
    if missing:
        mask = rng.uniform(size=Y.shape) < missing
        mask[:, 0] = False
        Y[mask] = np.nan
    return Xc, Y, grid


def test_stand_in_for_robust_losses_scores_by_curve_loo(rng):
    """Non-square losses: lambda is chosen by the exact LOO of the square-loss closed form (the stand-in)."""
    Xc, Y, grid = _curve_problem(rng)
    ds = _dataset(Xc, Y, grid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x", ds, dictionary=Fourier(2), loss="logcosh", lam_grid=LAMS,
                                   width_grid=None, b_grid=None, progress=False).fit()
    assert res.solver == "iterative" and res.lam_how == "leave-one-curve-out"
    scores = res.tuning.scores[0, 0]
    sq = KPLRegressor(dictionary=Fourier(2), kernel=res.estimator.kernel, lam=1e-3).fit({"x": ds.x}, ds.y)
    obs, w = _centred(sq, Y, grid)
    phi = sq.dictionary_.evaluate(grid)
    brute = [_brute_loo_exact(sq.K_, sq.gram_, sq.B_, phi, obs, w, lam) for lam in LAMS]
    np.testing.assert_allclose(scores, brute, rtol=1e-8)
    assert res.tuning.lam == LAMS[int(np.argmin(brute))]
    # the robust fit runs at the stand-in's lambda times the loss's curvature at 0, l''(0) / 2
    curvature = float(res.estimator.loss_.second_derivative(np.zeros(1), np.zeros(1))[0]) / 2
    assert res.lam == pytest.approx(res.tuning.lam * curvature, rel=1e-12)


def test_joint_width_b_lambda_equals_brute_force_search(rng):
    Xc, Y, grid = _curve_problem(rng, n=18)
    ds = _dataset(Xc, Y, grid)
    widths, bs = [0.5, 1.0, 2.0, 4.0], [1.0, 1.5, 2.5]
    kw = {"dictionary": Fourier(3), "lam_grid": LAMS, "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x", ds, width_grid=widths, b_grid=bs, **kw).fit()
        sigma0 = median_heuristic(ds.x.values, quadrature_weights(ds.x[ds.x.dims[1]].values))
        brute = np.empty((len(widths), len(bs), LAMS.size))
        for i, m in enumerate(widths):
            for j, b in enumerate(bs):  # independent fits with explicit kernel and B
                est = KPLRegressor(dictionary=Fourier(3), kernel=Product({"x": Gaussian(m * sigma0)}),
                                   output_matrix=ScaleDecay(b), lam=1e-3).fit({"x": ds.x}, ds.y)
                obs, w = _centred(est, Y, grid)
                phi = est.dictionary_.evaluate(grid)
                brute[i, j] = [_brute_loo_exact(est.K_, est.gram_, est.B_, phi, obs, w, lam) for lam in LAMS]
    np.testing.assert_allclose(res.tuning.scores, brute, rtol=1e-7)
    i, j, k = np.unravel_index(int(np.argmin(brute)), brute.shape)
    assert res.tuning.multiples == (widths[i],) and res.tuning.b == bs[j] and res.lam == LAMS[k]
    assert res.kernels["x"].sigma == pytest.approx(widths[i] * sigma0)
    assert repr(res.estimator.output_matrix) == repr(ScaleDecay(bs[j]))
    # the returned fit is the refit at the chosen values
    ref = KPLRegressor(dictionary=Fourier(3), kernel=res.estimator.kernel, output_matrix=ScaleDecay(bs[j]),
                       lam=LAMS[k]).fit({"x": ds.x}, ds.y)
    np.testing.assert_allclose(res.fitted.values, ref.predict({"x": ds.x}).values, rtol=1e-9, atol=1e-12)
    text = str(res.summary())
    assert re.search(rf"x\s+curve\s+Gaussian\(sigma=\S+\)\s+{res.tuning.multiples[0]:g} x median", text)
    assert f"B = ScaleDecay(b={bs[j]:g})" in text and "Tuning: width of x, b and lambda" in " ".join(text.split())


def test_two_terms_coordinate_search_and_gcv(rng):
    Xc, Y, grid = _curve_problem(rng, n=18)
    ds = _dataset(Xc, Y, grid, scalar=rng.normal(size=18))
    widths = [0.5, 2.0, 8.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x + z", ds, dictionary=Fourier(2), lam_grid=LAMS, width_grid=widths,
                                   b_grid=None, progress=False).fit()
        tun = res.tuning
        assert tun.terms == ["x", "scalars"] and len(tun.candidates) <= len(widths) * 3
        assert tun.score == np.nanmin(tun.scores)
        # the chosen point re-scored by an independent fit
        est = KPLRegressor(dictionary=Fourier(2), kernel=res.estimator.kernel, lam=1e-3).fit(
            res.model.parsed.inputs(ds), ds.y)
        obs, w = _centred(est, Y, grid)
        np.testing.assert_allclose(est.path_.loo(LAMS), tun.scores[tun.index[0], 0], rtol=1e-9)
        # pointwise GCV stays available (same search, GCV scores)
        g = FunctionalRegression("y ~ x + z", ds, dictionary=Fourier(2), lam="gcv", lam_grid=LAMS,
                                 width_grid=widths, b_grid=None, progress=False).fit()
    assert g.lam_how == "GCV" and g.tuning.criterion == "gcv"
    crit = g.criteria
    np.testing.assert_allclose(crit.gcv, g.tuning.scores[g.tuning.index[0], 0], rtol=1e-9)


def test_edge_warnings_for_every_tuned_parameter(rng):
    Xc, Y, grid = _curve_problem(rng, n=14)
    ds = _dataset(Xc, Y, grid)
    with pytest.warns(UserWarning) as rec:
        FunctionalRegression("y ~ x", ds, dictionary=Fourier(3), lam_grid=[1e3, 1e4], width_grid=[1e-3, 2e-3],
                             b_grid=[1.0, 1.01], progress=False).fit()
    msgs = " | ".join(str(r.message) for r in rec)
    assert "width multiple (of the median heuristic) of 'x'" in msgs and "lambda" in msgs
    assert edge_notice("b", np.array([1.0, 2.0]), 1.0, LOO(), "b_grid", natural_low=True) is None
    assert "scale decay b 2 is the largest" in edge_notice("scale decay b", np.array([1.0, 2.0]), 2.0, LOO(), "b_grid")
    # by value, not by position: an unsorted grid's interior choice is no edge
    assert edge_notice("lambda", np.array([1e-1, 1e-3, 1e-2]), 1e-2, LOO(), "lam_grid") is None


def test_search_needs_a_closed_form_criterion(rng):
    from fdakpl.ridge.problem import prepare_problem

    X, Y, grid = make_problem(rng, n=8, m=6)
    p = prepare_problem(X, Y, grid, dictionary=Fourier(1))
    with pytest.raises(ValueError, match="refits"):
        search(p, lambda m: (Gaussian(1.0), p.kernel_matrix(Gaussian(1.0))), [1.0], 0,
               lambda b: p.output_matrix(None), [np.nan], LAMS, KFold(3))


def test_bad_grids_name_the_argument(rng):
    Xc, Y, grid = _curve_problem(rng, n=10)
    with pytest.raises(ValueError, match="width_grid"):
        FunctionalRegression("y ~ x", _dataset(Xc, Y, grid), width_grid=[0.0, 1.0], progress=False).fit()
    with pytest.raises(ValueError, match="b_grid"):
        FunctionalRegression("y ~ x", _dataset(Xc, Y, grid), b_grid="wide", progress=False).fit()


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_primal_loo_same_in_chunks_and_on_dask(rng, tmp_path, missing):
    dask = pytest.importorskip("dask")
    X, Y, grid = make_problem(rng, n=60, m=15, missing=missing)
    ds = xr.Dataset({"x": (("sample", "p"), X), "y": (("sample", "t"), Y)}, coords={"t": grid})
    kw = dict(dictionary=Fourier(2), kernel=Gaussian(0.8), output_matrix=1.5, lam=LAMS,
              approx=Nystroem(20, random_state=0), progress=False)
    one = ApproxKPLRegressor(**kw, chunk_size=1000).fit(ds.x, ds.y)
    many = ApproxKPLRegressor(**kw, chunk_size=7).fit(ds.x, ds.y)
    np.testing.assert_allclose(many.scores_, one.scores_, rtol=1e-10)
    ds.to_netcdf(tmp_path / "c.nc")
    with xr.open_dataset(tmp_path / "c.nc", chunks={"sample": 13}) as lazy:
        assert dask.is_dask_collection(lazy.y.data)
        lazy_fit = ApproxKPLRegressor(**kw).fit(lazy.x, lazy.y)
    np.testing.assert_allclose(lazy_fit.scores_, one.scores_, rtol=1e-10)
    assert lazy_fit.lam_ == one.lam_


def test_cv_warns_when_a_tuned_parameter_is_on_its_grid_edge(rng):
    Xc, Y, grid = _curve_problem(rng, n=20)
    ds = _dataset(Xc, Y, grid)
    with pytest.warns(UserWarning) as rec:
        res = FunctionalRegression("y ~ x", ds, dictionary=Fourier(3), lam="cv", lam_grid=[1e-4, 1e-3, 1e-2],
                                   param_grid={"sigma": [1e-3, 2e-3], "b": [1.0, 1.5]}, n_jobs=1, random_state=0,
                                   progress=False).fit()
    msgs = " | ".join(str(r.message) for r in rec)
    assert "5-fold-CV-chosen sigma" in msgs  # widths 1000 x too narrow: the wider one, on the top edge
    assert res.cv_result["best_params"]["kernel"] is not None


def _brute_group_loo(K, G, B, phi, obs, w, lam, labels):
    n = obs.n_samples
    N = np.zeros((n, phi.shape[1]))
    np.add.at(N, obs.index, (w * obs.value)[:, None] * phi[obs.grid_index])
    errs = np.zeros(n)
    for g in np.unique(labels):
        out = labels == g
        keep = ~out
        A = brute_force_ridge(K[np.ix_(keep, keep)], G, B, N[keep], lam * n / keep.sum())
        for i in np.flatnonzero(out):
            h = B @ (K[i, keep] @ A)
            on = obs.index == i
            errs[i] = np.sum(w[on] * (obs.value[on] - phi[obs.grid_index[on]] @ h) ** 2)
    return float(errs.mean())


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_leave_one_group_out_equals_brute_force_refits(rng, missing):
    X, Y, grid = make_problem(rng, n=15, m=20, missing=missing)
    labels = np.repeat(["a", "b", "c", "d", "e"], 3)[rng.permutation(15)]
    model = KPLRegressor(dictionary=Fourier(2), kernel=Gaussian(0.8), output_matrix=1.5, lam=1e-3).fit(
        X, Y, locations=grid)
    obs, w = _centred(model, Y, grid)
    phi = model.dictionary_.evaluate(grid)
    got = model.path_.loo(LAMS, groups=labels)
    brute = [_brute_group_loo(model.K_, model.gram_, model.B_, phi, obs, w, lam, labels) for lam in LAMS]
    np.testing.assert_allclose(got, brute, rtol=1e-8)
    # one curve per group is leave-one-curve-out
    np.testing.assert_allclose(model.path_.loo(LAMS, groups=np.arange(15)), model.path_.loo(LAMS), rtol=1e-12)


def test_groups_through_the_front_end(rng):
    Xc, Y, grid = _curve_problem(rng, n=18)
    ds = _dataset(Xc, Y, grid)
    ds["subject"] = ("sample", np.repeat(np.arange(6), 3).astype(str))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = FunctionalRegression("y ~ x", ds, dictionary=Fourier(2), lam_grid=LAMS, width_grid=[1.0, 4.0],
                                   b_grid=None, groups="subject", progress=False).fit()
        est = KPLRegressor(dictionary=Fourier(2), kernel=res.estimator.kernel, lam=1e-3).fit({"x": ds.x}, ds.y)
    assert res.lam_how == "leave-one-group-out (subject)" and "LOGO error:" in str(res.summary())
    obs, w = _centred(est, Y, grid)
    phi = est.dictionary_.evaluate(grid)
    brute = [_brute_group_loo(est.K_, est.gram_, est.B_, phi, obs, w, lam, ds.subject.values) for lam in LAMS]
    np.testing.assert_allclose(res.tuning.scores[res.tuning.index[0], 0], brute, rtol=1e-8)
    with pytest.raises(ValueError, match="groups='nope' must name a variable"):
        FunctionalRegression("y ~ x", ds, groups="nope", progress=False).fit()
    with pytest.raises(ValueError, match="one label per curve"):
        FunctionalRegression("y ~ x", ds, groups=[1, 2], progress=False).fit()


def test_default_b_grid_upper_end_is_a_note_and_a_given_grid_warns():
    """b at the top of the default grid goes to the notes (extending it raised DTI's held-out error,
    benchmarks/grid_edges.py); the same choice on a grid the user gave still warns."""
    import warnings

    from fdakpl import datasets

    dti = datasets.dti_first_visits()
    # a fixed kernel and lambda: only b is tuned; a strongly decaying B is chosen on DTI's rcst
    kw = dict(kernel=Gaussian(0.3), lam=1e-4, interpolate_inputs=True, progress=False)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = FunctionalRegression("rcst ~ cca", dti, **kw).fit()
    texts = [str(r.message) for r in rec]
    assert res.tuning.b == 2.0
    assert not any("scale decay b" in t for t in texts), texts
    assert any(n.startswith("scale decay b = 2 chosen by") for n in res.notes), res.notes
    assert "Grid edges" in " ".join(str(res.summary(diagnostics="full")).split())
    assert "more notes on the tuning" in " ".join(str(res.summary()).split())  # B = ScaleDecay(b=2) is a row
    with pytest.warns(UserWarning, match="scale decay b 2 is the largest value of its grid"):
        given = FunctionalRegression("rcst ~ cca", dti, b_grid=[1.0, 1.5, 2.0], **kw).fit()
    assert given.tuning.b == 2.0 and not any(n.startswith("scale decay b") for n in given.notes)
