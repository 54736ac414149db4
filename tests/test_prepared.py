"""Data validated once at the boundary and handed inward as arrays (issue 15): the same numbers and labels as
when every layer checks and converts the data itself."""

import warnings

import numpy as np
import pytest
import xarray as xr
from sklearn.base import clone

from fdakpl import FunctionalRegression, Gaussian, KPLRegressor, Laplace, Product, datasets
from fdakpl.data.labels import check_same_samples, labelled_array
from fdakpl.data.prepared import PreparedInputs, PreparedResponse
from fdakpl.data.preprocessing import prepare_inputs, prepare_response
from fdakpl.dictionaries import Fourier


@pytest.fixture(scope="module")
def dti():
    ds = datasets.dti_first_visits()
    return ds.isel(sample=slice(0, 60)), ds.isel(sample=slice(60, 100))


def _model(ds, **kw):
    return FunctionalRegression("rcst ~ cca", ds, dictionary=Fourier(5), kernel=Gaussian(0.1), lam=1e-3,
                                output_matrix="identity", interpolate_inputs=True, progress=False, **kw)


def test_prepared_data_fit_as_the_labelled_data(dti):
    tr, _ = dti
    X = {"cca": tr.cca}
    est = KPLRegressor(dictionary=Fourier(5), kernel=Product({"cca": Gaussian(0.1)}), lam=1e-3, interpolate_inputs=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the filled input values (noted once; not what is tested here)
        ref = clone(est).fit(X, tr.rcst)
        Xp = PreparedInputs(*prepare_inputs(X, interpolate=True))
    fitted = est.fit(Xp, PreparedResponse(*prepare_response(tr.rcst)))
    assert np.array_equal(fitted.dual_coef_, ref.dual_coef_) and np.array_equal(fitted.K_, ref.K_)
    assert fitted.response_info_.kind == "dataarray"
    xr.testing.assert_identical(fitted.predict(Xp_new := PreparedInputs(
        *prepare_inputs({"cca": tr.cca.fillna(0.5)}, spec=fitted.input_spec_), checked_spec=fitted.input_spec_)),
        ref.predict({"cca": tr.cca.fillna(0.5)}))
    assert Xp_new.checked_spec is fitted.input_spec_


def test_prepared_inputs_checked_against_another_model_are_refused(dti):
    tr, _ = dti
    X = {"cca": tr.cca.fillna(0.5)}
    est = KPLRegressor(dictionary=Fourier(5), kernel=Product({"cca": Gaussian(0.1)})).fit(X, tr.rcst)
    with pytest.raises(ValueError, match="not checked against this model's inputs"):
        est.predict(PreparedInputs(*prepare_inputs(X)))  # training-time preparation: no spec checked
    with pytest.raises(ValueError, match="carries its locations"):
        est.fit(X, PreparedResponse(*prepare_response(tr.rcst)), locations=np.linspace(0, 1, 55))


def test_prepared_response_takes_the_estimators_domain(dti):
    tr, _ = dti
    obs, info = prepare_response(PreparedResponse(*prepare_response(tr.rcst)), domain=(-0.5, 1.5))
    assert info.domain == (-0.5, 1.5) and info.kind == "dataarray"


def test_front_end_predictions_are_labelled_as_before(dti):
    """The front end labels plain predictions once (sharing the data's indexes); the result is identical to
    the estimator's own labelled prediction, renamed as the front end did."""
    tr, te = dti
    res = _model(tr).fit()
    est = res.estimator
    for new, at in [(te, None), (te, [0.0, 0.25, 1.0]), (None, None)]:
        data = tr if new is None else new
        pred = res.predict(new, at=at)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the filled input values
            ref = est.predict(res.model.parsed.inputs(data), at=at).rename("rcst")
        xr.testing.assert_identical(pred, ref)
        assert pred.dims == ("sample", "rcst_loc")
    # integer sample labels, and no sample labels at all
    renum = te.assign_coords(sample=np.arange(te.sizes["sample"]) + 1000)
    assert list(res.predict(renum).sample.values[:2]) == [1000, 1001]
    bare = te.drop_vars("sample")
    pred = res.predict(bare)
    assert "sample" not in pred.coords and np.array_equal(pred.values, res.predict(te).values)


def test_labelled_array_as_the_public_constructor():
    ds = xr.Dataset(coords={"sample": ["a", "b"], "t": [0.0, 1.0]})
    v = np.arange(4.0).reshape(2, 2)
    fast = labelled_array(v, ("sample", "t"), {"sample": ds, "t": ds}, "y")
    xr.testing.assert_identical(fast, xr.DataArray(v, dims=("sample", "t"), coords={"sample": ["a", "b"],
                                                                                    "t": [0.0, 1.0]}, name="y"))
    xr.testing.assert_identical(labelled_array(v, ("sample", "t"), {"sample": ["a", "b"], "t": np.array([0.0, 1.0])},
                                               "y"), fast)


def test_kernel_of_a_set_with_itself_is_the_cross_kernel(rng):
    X = rng.normal(size=(30, 7))
    w = rng.uniform(0.1, 1.0, size=7)
    for k in (Gaussian(0.7), Laplace(1.3)):
        assert np.array_equal(k(X), k(X, X.copy())) and np.array_equal(k(X, None, w), k(X, X.copy(), w))


def test_sample_labels_compared_as_text():
    check_same_samples(2, np.array(["a", "b"]), 2, np.array(["a", "b"], dtype=object))
    check_same_samples(2, np.array([1, 2]), 2, np.array(["1", "2"]))  # as text, as before
    with pytest.raises(ValueError, match="different sample labels"):
        check_same_samples(2, np.array(["a", "b"]), 2, np.array(["b", "a"]))
    with pytest.raises(ValueError, match="different sample labels"):
        check_same_samples(2, np.array([1, 2]), 2, np.array([1, 3]))


def test_sample_labels_of_mixed_types_compared_as_text():
    texts = np.array(["a", "b"], dtype=object)
    check_same_samples(2, texts, 2, texts.copy())
    check_same_samples(2, np.array([1, 2], dtype=object), 2, np.array(["1", "2"], dtype=object))
    with pytest.raises(ValueError, match="different sample labels"):  # equal as numbers, not as texts
        check_same_samples(2, np.array([1, 2], dtype=object), 2, np.array([1.0, 2.0], dtype=object))


def test_checked_kernel_matrix_is_the_checked_call(rng):
    from fdakpl.kernels import IntegralGaussian, Linear, Sum

    X, Y = rng.normal(size=(12, 4)), rng.normal(size=(5, 4))
    w = rng.uniform(0.1, 1.0, size=4)
    for k in (Gaussian(0.8), Laplace(1.1), Linear()):
        assert np.array_equal(k.checked_matrix(X, None, w), k(X, None, w))
        assert np.array_equal(k.checked_matrix(Y, X, w), k(Y, X, w))
    terms = {"a": X, "b": X[:, :2]}
    new = {"a": Y, "b": Y[:, :2]}
    for k in (Product({"a": Gaussian(0.8), "b": Linear()}), Sum({"a": Gaussian(0.8), "b": Laplace(2.0)})):
        assert np.array_equal(k.checked_matrix(terms, None, {"a": w}), k(terms, None, {"a": w}))
        assert np.array_equal(k.checked_matrix(new, terms), k(new, terms))
    with pytest.raises(ValueError, match="no term 'b'"):  # what is wrong is said by the full path
        Product({"a": Gaussian(0.8), "b": Linear()}).checked_matrix({"a": X})
    curves = rng.normal(size=(6, 3, 2))  # a kernel with its own call: the full path
    assert np.array_equal(IntegralGaussian(1.0).checked_matrix(curves), IntegralGaussian(1.0)(curves))


def test_validation_remembered_only_for_the_same_objects():
    import gc
    import weakref

    from fdakpl.data.functional import validate_functional

    da = xr.DataArray(np.zeros((3, 4)), dims=("sample", "t"), coords={"t": np.arange(4.0), "sample": ["a", "b", "c"]})
    validate_functional(da, "y")
    validate_functional(da, "y")  # found valid before: not checked again, same result
    with pytest.raises(ValueError, match="not strictly increasing"):  # a new coordinate is checked
        validate_functional(da.assign_coords(t=[0.0, 2.0, 1.0, 3.0]), "y")
    with pytest.raises(ValueError, match="duplicated sample labels"):  # new labels are checked
        validate_functional(da.assign_coords(sample=["a", "a", "c"]), "y")
    with pytest.raises(TypeError, match="real numbers"):  # new values of another type are checked
        validate_functional(da.copy(data=np.zeros((3, 4), dtype=complex)), "y")
    ref = weakref.ref(da.variable.data)
    del da
    gc.collect()
    assert ref() is None  # nothing is kept alive
