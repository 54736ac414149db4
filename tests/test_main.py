import subprocess
import sys
import warnings

import numpy as np
import pytest

from fdakpl.__main__ import holdout_errors, main, mean_curve_prediction


def test_main_job_runs_end_to_end(tmp_path, capsys):
    fig = tmp_path / "dti.png"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["--figure", str(fig), "--seed", "3"]) == 0
    assert not caught, [str(w.message) for w in caught]  # interpolation is noted in the summary, not warned
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines() if str(tmp_path) not in line)
    assert "test MSE" in out and "Kennedy-Krieger" in out
    assert "Excess-risk diagnostics" in out and "rcst ~ cca" in out and "conformal band" in out
    assert fig.stat().st_size > 20_000  # a real PNG figure
    mse = float(out.split("test MSE          :")[1].split()[0])
    assert 0.001 < mse < 0.01  # DTI rcst FA profiles: the paper's scale once multiplied by ~53 points
    # both held-out errors, recomputed independently: the same split, xarray's mean curve, a separate fit
    from fdakpl import FunctionalRegression
    from fdakpl.datasets import dti_first_visits

    ds = dti_first_visits()
    perm = np.random.default_rng(3).permutation(ds.sizes["sample"])
    train, test = ds.isel(sample=np.sort(perm[:70])), ds.isel(sample=np.sort(perm[70:]))
    y = test["rcst"]
    mean_mse = float(((y - train["rcst"].mean("sample", skipna=True)) ** 2).mean("rcst_loc").mean("sample"))
    res = FunctionalRegression("rcst ~ cca", data=train, interpolate_inputs=True, progress=False).fit()
    kpl_mse = float(((y - res.predict(test).values) ** 2).mean("rcst_loc").mean("sample"))
    printed_mean = float(out.split("mean curve MSE    :")[1].split()[0])
    assert mse == pytest.approx(kpl_mse, abs=6e-6) and printed_mean == pytest.approx(mean_mse, abs=6e-6)
    assert kpl_mse < mean_mse  # the model beats the mean curve on this split (as on 20 of 20 in the benchmark)
    gain = float(out.split("KPL is")[1].split("%")[0])
    assert gain == pytest.approx(100 * (1 - kpl_mse / mean_mse), abs=0.1)


def test_main_job_as_module(tmp_path):
    fig = tmp_path / "f.png"
    res = subprocess.run([sys.executable, "-m", "fdakpl", "--figure", str(fig)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert fig.exists()


def test_mean_curve_prediction():
    train = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, np.nan]])
    np.testing.assert_array_equal(mean_curve_prediction(train, 3), np.tile([2.0, 4.0, 2.0], (3, 1)))
    with pytest.raises(ValueError, match="observed in no training curve"):
        mean_curve_prediction(np.array([[1.0, np.nan]]), 1)


def test_holdout_error_definitions():
    obs = np.array([[1.0, np.nan, 3.0], [0.0, 0.0, np.nan]])
    pred = np.array([[2.0, 9.0, 3.0], [1.0, 1.0, 7.0]])
    e = holdout_errors(obs, pred)
    assert e["mean_of_means"] == (0.5 + 1.0) / 2
    assert e["mean_of_sums"] == (1.0 + 2.0) / 2


@pytest.mark.parametrize("argv0, prog", [("/x/site-packages/fdakpl/__main__.py", "python -m fdakpl"),
                                          ("/usr/local/bin/fdakpl-dti", "fdakpl-dti")])
def test_help_is_plain_text_and_names_the_program(monkeypatch, capsys, argv0, prog):
    monkeypatch.setattr(sys, "argv", [argv0, "--help"])
    with pytest.raises(SystemExit) as stop:
        main()
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {prog} [-h]")
    assert "``" not in out and ":func:" not in out and ":class:" not in out
    assert "DTI" in out and "--figure" in out and "--seed" in out


def test_help_as_module_subprocess():
    res = subprocess.run([sys.executable, "-m", "fdakpl", "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("usage: python -m fdakpl") and "``" not in res.stdout
