import numpy as np

from fdakpl import datasets


def test_dti_matches_refund_documentation():
    ds = datasets.load_dti()
    assert ds.sizes == {"sample": 382, "cca_loc": 93, "rcst_loc": 55}
    assert int(ds.cca.isnull().sum()) == 36
    assert int(ds.rcst.isnull().sum()) == 738
    assert ds.sample.values[0] == "1001_1"
    assert ds.sex.attrs["levels"] == ["male", "female"]
    assert set(np.unique(ds.sex.values)) == {"male", "female"}
    assert int((ds.case == 0).sum()) == 42 and len(np.unique(ds.ID.values)) == 142
    assert np.isnan(ds.pasat.where(ds.case == 0, drop=True)).all()
    assert ds.attrs["acknowledgment"] == datasets.DTI_ACKNOWLEDGMENT
    np.testing.assert_allclose(ds.rcst_loc.values[[0, -1]], [0.0, 1.0])


def test_first_visits_are_the_papers_sample():
    first = datasets.dti_first_visits()
    assert first.sizes["sample"] == 100
    assert (first.case == 1).all() and (first.visit == 1).all()
    assert int(first.cca.isnull().sum()) == 2
    assert int(first.rcst.isnull().sum()) == 192
    assert len(np.unique(first.ID.values)) == 100


def test_dti_keeps_r_column_order_and_types():
    ds = datasets.load_dti(source="rdata")
    assert list(ds.data_vars) == ["ID", "visit", "visit_time", "Nscans", "case", "sex", "pasat", "cca", "rcst"]
    assert ds.visit_time.attrs == {"r_name": "visit.time", "r_type": "integer"}
    assert ds.pasat.attrs["r_type"] == "integer" and ds.pasat.dtype == np.float64  # NA -> NaN
    assert ds.visit.dtype == np.int32


def test_dti_unknown_source():
    import pytest

    with pytest.raises(ValueError, match="unknown source 'cran'; use one of 'auto', 'refund', 'r', 'rdata'"):
        datasets.load_dti(source="cran")
