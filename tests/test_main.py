import subprocess
import sys
import warnings

import numpy as np
import pytest

from fdakpl.__main__ import holdout_errors, main


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


def test_main_job_as_module(tmp_path):
    fig = tmp_path / "f.png"
    res = subprocess.run([sys.executable, "-m", "fdakpl", "--figure", str(fig)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert fig.exists()


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
