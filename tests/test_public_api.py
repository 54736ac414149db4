"""The public API: the exact top-level names, one parameter name per meaning across families, and the defaults."""

import inspect

import numpy as np
import pytest

import fdakpl
from fdakpl import baselines, dictionaries, kernels, losses
from fdakpl.estimators.approx import ApproxKPLRegressor
from fdakpl.regression.model import FunctionalRegression
from fdakpl.solvers.iterative import kpl_iterative_path
from fdakpl.tuning.kfold import kfold_path

TOP_LEVEL = [
    "FPCA", "ApproxKPLRegressor", "BSpline", "Categorical", "Fourier", "FunctionalRegression",
    "FunctionalRegressionResults", "Gaussian", "Huber", "IntegralGaussian", "KPLRegressor", "Laplace", "Linear",
    "LogCosh", "Nystroem",
    "PenalizedLinear", "PiecewiseLinear", "Product", "PseudoHuber", "RandomFourierFeatures", "SmoothedLinear",
    "Square", "Sum",
    "Wavelet", "__version__", "baselines", "datasets", "dictionaries", "excess_risk_bound", "kernels", "load",
    "losses", "save", "solvers",
]

#: names that left the top level in 0.x, and where they live
MOVED = {"Identity": kernels, "Matrix": kernels, "ScaleDecay": kernels, "Learned": dictionaries,
         "RandomFourier": dictionaries, "make_dictionary": dictionaries, "CustomLoss": losses, "make_loss": losses}


def test_top_level_names_are_exactly_these():
    assert sorted(fdakpl.__all__) == sorted(TOP_LEVEL)
    assert len(set(fdakpl.__all__)) == len(fdakpl.__all__)
    for name in fdakpl.__all__:
        assert hasattr(fdakpl, name), name


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_every_top_level_name_has_a_docstring_with_an_example(name):
    obj = getattr(fdakpl, name)
    if name == "__version__":  # a string has no docstring of its own: the package's example shows it
        assert isinstance(obj, str) and "fdakpl.__version__" in fdakpl.__doc__ and ">>>" in fdakpl.__doc__
        return
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    assert ">>>" in doc, f"the docstring of {name} has no example"


@pytest.mark.parametrize(("name", "home"), MOVED.items())
def test_moved_names_live_in_their_namespace_only(name, home):
    assert not hasattr(fdakpl, name)
    assert name in home.__all__ and getattr(home, name) is not None


def _params(cls):
    return inspect.signature(cls).parameters


def test_dictionary_sizes_are_n_atoms():
    for cls in (dictionaries.BSpline, dictionaries.FPCA, dictionaries.RandomFourier, dictionaries.Learned,
                baselines.KernelAdditiveModel):
        assert "n_atoms" in _params(cls), cls.__name__
    assert "n_freqs" in _params(dictionaries.Fourier)  # counts frequencies: 2 n_freqs + 1 atoms
    assert "level" in _params(dictionaries.Wavelet) and "level" in _params(FunctionalRegression)


def test_input_side_feature_counts_are_n_components():
    for cls in (fdakpl.Nystroem, fdakpl.RandomFourierFeatures, baselines.TripleBasisEstimator):
        assert "n_components" in _params(cls), cls.__name__


def _public_callables():
    """Every public class and function of fdakpl's modules, with its signature."""
    import importlib
    import pkgutil

    seen = {}
    for info in pkgutil.walk_packages(fdakpl.__path__, "fdakpl."):
        if info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__.startswith("fdakpl"):
                seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return seen


OLD_NAMES = {"n_basis", "levels", "progress_bar", "show_progress", "verbose"}


def test_no_public_signature_uses_an_old_name_and_flags_and_seeds_have_one_default():
    found = _public_callables()
    assert len(found) > 50
    for where, obj in found.items():
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            continue
        assert not OLD_NAMES & set(params), (where, OLD_NAMES & set(params))
        # n_features stays only where it means scikit-learn's n_features_in_ (the width of the inputs)
        if inspect.isclass(obj) and where != "fdakpl.data.preprocessing.InputSpec":
            assert "n_features" not in params, where
        if "progress" in params:
            p = params["progress"]
            assert p.default is None or p.default is inspect.Parameter.empty, (where, p.default)
        if "random_state" in params:
            p = params["random_state"]
            assert p.default == 0 or p.default is inspect.Parameter.empty, (where, p.default)


def test_progress_and_seed_defaults_of_the_front_end():
    for f in (FunctionalRegression, ApproxKPLRegressor, kfold_path, kpl_iterative_path, dictionaries.Learned):
        assert _params(f)["progress"].default is None, f
    for f in (FunctionalRegression, kfold_path, dictionaries.RandomFourier, baselines.TripleBasisEstimator,
              fdakpl.datasets.make_toy):
        assert _params(f)["random_state"].default == 0, f


def test_front_end_cv_is_reproducible_by_default():
    ds = fdakpl.datasets.dti_first_visits().isel(sample=slice(0, 40))
    fits = [FunctionalRegression("rcst ~ cca", ds, dictionary="fourier", lam="cv", cv=3, n_jobs=1,
                                 interpolate_inputs=True, progress=False, lam_grid=np.geomspace(1e-6, 1, 7)).fit()
            for _ in range(2)]
    assert fits[0].lam == fits[1].lam
    np.testing.assert_array_equal(fits[0].cv_result["scores"], fits[1].cv_result["scores"])


def test_front_end_refuses_the_old_cv_grid_key():
    ds = fdakpl.datasets.dti_first_visits().isel(sample=slice(0, 30))
    with pytest.raises(ValueError, match="param_grid key 'levels' was renamed 'level'"):
        FunctionalRegression("rcst ~ cca", ds, dictionary="db3", lam="cv", cv=3, n_jobs=1, interpolate_inputs=True,
                             progress=False, param_grid={"levels": [3, 4]}).fit()
    with pytest.raises(TypeError, match="levels"):
        FunctionalRegression("rcst ~ cca", ds, levels=4)
