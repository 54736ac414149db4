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


# values below were read with R 4.2.2: load("aemet.rda"); aemet$temp$data[1, 1:3] etc.
def test_aemet_matches_the_rda():
    ds = datasets.load_aemet()
    assert ds.sizes == {"sample": 73, "temp_loc": 365, "wind_speed_loc": 365, "logprec_loc": 365}
    assert all(int(ds[v].isnull().sum()) == 0 for v in ("temp", "wind_speed", "logprec"))
    assert ds.sample.values[0] == "A CORUÑA" and ds.ind.values[2] == "1428"
    np.testing.assert_allclose(ds.temp.values[0, :3], [11.27333, 11.26333, 11.02333], atol=1e-5)
    np.testing.assert_allclose(ds.logprec.values[:2, :3], [[0.8705958, 1.165752, 1.690711],
                                                           [0.8116707, 1.115688, 1.694085]], atol=1e-6)
    np.testing.assert_allclose([ds.logprec.values.min(), ds.logprec.values.max()], [-6.396930, 4.243893], atol=1e-6)
    np.testing.assert_allclose(ds.temp_loc.values[[0, -1]], [0.5, 364.5])
    assert ds.temp.attrs["domain"] == [0.0, 365.0]
    assert ds.altitude.values[:3].tolist() == [58, 98, 370] and ds.altitude.dtype == np.int32


def test_poblenou_matches_the_rda():
    ds = datasets.load_poblenou()
    assert ds.sizes == {"sample": 115, "nox_loc": 24}
    assert int(ds.nox.isnull().sum()) == 0
    assert ds.nox.values[0, :3].tolist() == [27.0, 40.0, 30.0]
    assert ds.sample.values[0] == "2005-02-23" and ds.day_week.values[0] == "3"
    assert ds.day_week.attrs["levels"] == [str(k) for k in range(1, 8)]
    assert ds.day_festive.attrs["levels"] == ["0", "1"]
    np.testing.assert_array_equal(ds.nox_loc.values, np.arange(24.0))


def test_emotion_matches_the_rdata():
    ds = datasets.load_emotion()
    assert ds.sizes == {"sample": 184, "EEG_loc": 384, "EMG_loc": 384}
    assert int(ds.EEG.isnull().sum()) == 0 and int(ds.EMG.isnull().sum()) == 0
    np.testing.assert_allclose(ds.EMG.values[0, :3], [-2.55814368, -0.06710788, 2.93374230], atol=1e-8)
    np.testing.assert_allclose(ds.EEG.values[0, :3], [-0.1397779, -0.3176168, -0.4971671], atol=1e-7)
    assert ds.subject.values[:9].tolist() == ["1"] * 8 + ["2"]
    assert len(ds.subject.attrs["levels"]) == 23 and np.unique(ds.subject.values).size == 23
    assert ds.power.values[:4].tolist() == ["high", "high", "low", "low"]
    assert ds.game_outcome.attrs["levels"] == ["gain", "loss"]
    assert ds.sample.values[[0, 8]].tolist() == ["1_1", "2_1"]


def test_bundled_data_are_the_packages_files():
    import hashlib

    from fdakpl.datasets._bundled import data_path

    sums = {"aemet.rda": "afcc263ced6142c6732acd3cd6ea1bc192215bf991af3dbd333f473f70252887",
            "poblenou.rda": "a66081884820a43a8481af6508ef910d3aad2b00e4f81a69d406f5b4912ce5a6",
            "emotion.RData": "882eccaf5f9e626c79c31ed5b58c58e898d6bf5d531ccdf7fbdd868958778c00"}
    for name, digest in sums.items():
        with open(data_path(name), "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == digest
