import numpy as np
import pandas as pd
import pytest
import xarray as xr

from fdakpl.data.functional import (
    Observations,
    from_long,
    observations_from_long,
    quadrature_weights,
    to_long,
    validate_functional,
)


def _da(values, grid, labels=None, name="y"):
    labels = np.arange(values.shape[0]) if labels is None else labels
    return xr.DataArray(values, dims=("sample", "t"), coords={"sample": labels, "t": grid}, name=name)


def test_dense_long_round_trip_keeps_values_nan_and_labels(rng):
    vals = rng.normal(size=(5, 7))
    vals[rng.uniform(size=vals.shape) < 0.3] = np.nan
    da = _da(vals, np.linspace(0, 2, 7), labels=[f"s{i}" for i in range(5)])
    long = to_long(da)
    assert len(long) == int(np.isfinite(vals).sum())
    assert not long["value"].isna().any()
    back = from_long(long, grid=da.t.values)
    np.testing.assert_array_equal(back.values, vals)  # NaN in the same places, values exact
    assert list(back.sample.values) == list(da.sample.values)
    assert back.dims == ("sample", "t") and back.name == "y"


def test_all_nan_sample_survives_round_trip_through_samples_attr():
    vals = np.array([[1.0, 2.0], [np.nan, np.nan]])
    back = from_long(to_long(_da(vals, [0.0, 1.0])), grid=[0.0, 1.0])
    np.testing.assert_array_equal(back.values, vals)


def test_irregular_long_form_keeps_per_curve_locations():
    df = pd.DataFrame({"sample": ["a", "a", "b", "b", "b"], "location": [0.1, 0.73, 0.05, 0.5, 0.91],
                       "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
    obs, labels = observations_from_long(df)
    assert list(labels) == ["a", "b"]
    np.testing.assert_array_equal(obs.counts, [2, 3])
    np.testing.assert_allclose(obs.location, [0.1, 0.73, 0.05, 0.5, 0.91])
    dense = from_long(df)
    assert dense.shape == (2, 5) and int(dense.notnull().sum()) == 5


def test_from_long_refuses_off_grid_and_duplicates():
    df = pd.DataFrame({"sample": [0, 0], "location": [0.0, 0.3], "value": [1.0, 2.0]})
    with pytest.raises(ValueError, match="not on the requested grid"):
        from_long(df, grid=[0.0, 0.5])
    dup = pd.DataFrame({"sample": [0, 0], "location": [0.0, 0.0], "value": [1.0, 2.0]})
    with pytest.raises(ValueError, match="same \\(sample, location\\)"):
        from_long(dup)


def test_quadrature_weights_integrate_exactly_linear_functions():
    grid = np.sort(np.random.default_rng(1).uniform(0, 1, 30))
    w = quadrature_weights(grid, (0.0, 1.0))
    assert w.sum() == pytest.approx(1.0)
    # midpoint-cell rule is exact for constants and linear functions on [0,1]? for constants yes
    assert np.sum(w * 3.0) == pytest.approx(3.0)
    w2 = quadrature_weights(np.linspace(0, 1, 201))
    assert np.sum(w2 * np.sin(np.pi * np.linspace(0, 1, 201))) == pytest.approx(2 / np.pi, rel=1e-4)


@pytest.mark.parametrize(
    "coord, match",
    [(["a", "b", "c"], "numeric"), ([0.0, 0.5, 0.2], "strictly increasing"), ([0.0, 0.5, 0.5], "strictly increasing")],
)
def test_validate_functional_rejects_bad_coordinates(coord, match):
    da = xr.DataArray(np.zeros((2, 3)), dims=("sample", "t"), coords={"t": coord}, name="y")
    with pytest.raises(ValueError, match=match):
        validate_functional(da)


def test_validate_functional_rejects_bad_dims_and_dtypes():
    with pytest.raises(ValueError, match="no 'sample' dim"):
        validate_functional(xr.DataArray(np.zeros((2, 3)), dims=("obs", "t"), coords={"t": [0, 1, 2]}))
    with pytest.raises(ValueError, match="exactly one location dim"):
        validate_functional(xr.DataArray(np.zeros((2, 3, 2)), dims=("sample", "t", "u")))
    with pytest.raises(TypeError, match="real numbers"):
        validate_functional(xr.DataArray(np.array([["a", "b"]]), dims=("sample", "t"), coords={"t": [0, 1]}))
    with pytest.raises(ValueError, match="no coordinate"):
        validate_functional(xr.DataArray(np.zeros((2, 3)), dims=("sample", "t")), "y")


def test_observations_subset_and_dense():
    Y = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0], [np.nan, 8.0, np.nan]])
    obs = Observations.from_dense(Y, np.array([0.0, 0.5, 1.0]))
    sub = obs.subset(np.array([2, 0]))
    np.testing.assert_array_equal(sub.to_dense(), Y[[2, 0]])
    assert obs.fully_observed is False
    assert Observations.from_dense(Y[[1]], np.array([0.0, 0.5, 1.0])).fully_observed
