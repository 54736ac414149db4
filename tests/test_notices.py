"""Warnings are said once, in the user's words, at the user's line (issue 16, item 1)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import fdakpl
from fdakpl import FunctionalRegression, KPLRegressor, datasets
from fdakpl.dictionaries import Fourier
from fdakpl.kernels import Gaussian
from fdakpl.utils.notices import PACKAGE_DIR, InterpolationWarning, said_once, user_stacklevel, warn

PKG = str(Path(fdakpl.__file__).resolve().parent)

@pytest.fixture(scope="module")
def dti():
    return datasets.dti_first_visits().isel(sample=slice(0, 40))  # holds 2017_1 (position 16), cca has 2 NaN


def test_package_dir_is_the_package():
    assert Path(PACKAGE_DIR).resolve() == Path(PKG)


def test_warn_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        warn("a cause")  # this line
    assert len(w) == 1 and w[0].filename == __file__ and w[0].category is UserWarning
    assert user_stacklevel() == 1  # called from outside the package: the caller itself


def test_said_once_repeats_each_cause_once_and_keeps_quiet_ones():
    # fdakpl's warnings (notices.warn) are gathered per thread, without global warning filters (issue 13)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with said_once(quiet=(InterpolationWarning,)) as gathered:
            for _ in range(7):
                warn("cause A")
                warn("cause B", RuntimeWarning)
                warn("filled", InterpolationWarning)
    assert len(gathered) == 21
    assert [(w.category, str(w.message)) for w in shown] == [(UserWarning, "cause A"), (RuntimeWarning, "cause B")]
    assert all(w.filename == __file__ for w in shown)


def test_said_once_drops_nothing_on_success_and_keeps_errors():
    with pytest.raises(ZeroDivisionError), said_once():
        1 / 0  # noqa: B018 - the exception propagates unchanged


def test_fit_predict_bands_permutation_one_warning_per_cause(dti):
    """The issue's scenario: interpolate_inputs=True and a lambda on the edge of its grid, plus an
    over-complete Fourier dictionary (more atoms than response locations) that every refit warns about."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = FunctionalRegression("rcst ~ cca", dti, dictionary=Fourier(n_freqs=30), kernel=Gaussian(0.1),
                                   lam_grid=[1e-1, 1.0, 10.0], b_grid=None,  # one tuned value on its edge: lambda
                                   interpolate_inputs=True, progress=False).fit()
        res.predict(dti.isel(sample=[15, 16, 17]))
        res.predict()
        res.prediction_bands(dti.isel(sample=[16]), alpha=0.2)
        out = res.permutation_test("cca", n_permutations=9, progress=False)
    texts = [str(x.message) for x in w]
    assert out.null_distribution.shape == (9,)
    assert not any(issubclass(x.category, InterpolationWarning) for x in w), texts  # the user asked for it
    notes = [n for n in res.notes if "filled" in n]
    assert notes == ["'cca': filled 2 missing input values of samples ['2017_1'] by linear interpolation "
                     "(interpolate_inputs=True)"]
    assert notes[0] in " ".join(str(res.summary()).split())  # the summary wraps its notes at 80 characters
    # each remaining cause at most once per call that raised it, pointing at this file
    edge = [t for t in texts if "edge" in t or "smallest" in t or "largest" in t]
    atoms = [t for t in texts if "not identifiable" in t]
    assert len(edge) == 1, texts
    assert 1 <= len(atoms) <= 3, texts  # fit, bands, permutation test: once each, not once per refit
    assert len(texts) == len(edge) + len(atoms), texts
    assert all(x.filename == __file__ for x in w), [(x.filename, x.lineno) for x in w]  # none inside fdakpl/
    assert not any(str(Path(x.filename).resolve()).startswith(PKG) for x in w)


def test_interpretation_does_not_repeat_the_interpolation_the_user_asked_for(dti):
    """effect_surface / partial_dependence prepare the inputs again: the filled values were noted at fit time."""
    res = FunctionalRegression("rcst ~ cca + sex", dti, interpolate_inputs=True, progress=False).fit()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res.effect_surface("cca")
        res.partial_dependence("sex")
    assert not any(issubclass(x.category, InterpolationWarning) for x in w), [str(x.message) for x in w]


def test_array_level_interpolation_is_silent_and_said_in_the_notes(dti):
    """interpolate_inputs=True is the user's request: no warning at the array level, even in a loop of fits
    (vignette 01 printed it about 200 times), nor from simultaneous bands; the formula interface notes it."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            m = KPLRegressor(dictionary=Fourier(3), kernel=Gaussian(0.1), lam=1e-2,
                             interpolate_inputs=True).fit(dti.cca, dti.rcst)
            pred = m.predict(dti.cca)
        res = FunctionalRegression("rcst ~ cca", dti, interpolate_inputs=True, progress=False).fit()
        res.prediction_bands(dti.isel(sample=[15, 16]), alpha=0.2, kind="simultaneous")
    assert not any(issubclass(x.category, InterpolationWarning) for x in w), [str(x.message) for x in w]
    assert np.isfinite(pred.values).all()
    assert [n for n in res.notes if "filled" in n] == [
        "'cca': filled 2 missing input values of samples ['2017_1'] by linear interpolation (interpolate_inputs=True)"]


def test_missing_input_error_names_labels(dti):
    with pytest.raises(ValueError, match=r"'cca' has NaN for samples \['2017_1'\].*interpolate_inputs=True"):
        KPLRegressor(dictionary=Fourier(3), lam=1e-2).fit(dti.cca, dti.rcst)
    with pytest.raises(ValueError, match=r"'X' has NaN or infinite values for samples at positions \[16\]"):
        KPLRegressor(dictionary=Fourier(3), lam=1e-2).fit(dti.cca.values, dti.rcst)


def test_main_job_and_vignette_do_not_silence_warnings_by_hand():
    root = Path(__file__).resolve().parents[1]
    for path in (root / "fdakpl" / "__main__.py", root / "vignettes" / "01_dti.py",
                 root / "vignettes" / "05_interpretation.py"):
        text = path.read_text(encoding="utf-8")
        assert "filterwarnings" not in text and "catch_warnings" not in text, path
