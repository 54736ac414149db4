"""Bundled real data of fda.usc (aemet, poblenou) and FDboost (emotion), read without R.

The files are the packages' own ``.rda`` / ``.RData`` files, unchanged (checksums and licences in
``fdakpl/datasets/data/NOTICE``); they are read with the package ``rdata`` (no code is executed).
"""

from __future__ import annotations

import warnings
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..data.functional import SAMPLE

__all__ = ["load_aemet", "load_emotion", "load_poblenou"]

FDA_USC_CITATION = ("Febrero-Bande, M. and Oviedo de la Fuente, M. (2012). Statistical computing in functional data "
                    "analysis: the R package fda.usc. Journal of Statistical Software 51(4).")
_FDA_USC = {"license": "GPL-2, as the R package fda.usc (version 2.2.0)", "citation": FDA_USC_CITATION}


def data_path(name: str) -> str:
    """Path of a bundled data file.

    Examples
    --------
    >>> data_path("aemet.rda").endswith("aemet.rda")
    True
    """
    return str(resources.files("fdakpl.datasets").joinpath(f"data/{name}"))


def _read(name: str, obj: str) -> dict[str, Any]:
    import rdata

    class_map = dict(rdata.conversion.DEFAULT_CLASS_MAP)
    for cls in ("fdata", "lfdata", "list"):  # fda.usc's S3 lists: keep them as dicts, without a warning
        class_map[cls] = lambda x, attrs: x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Unknown encoding. Assumed ASCII." for pure-ASCII strings
        return rdata.conversion.convert(rdata.parser.parse_file(data_path(name)), class_map)[obj]


def _curve(values: Any, grid: np.ndarray, name: str, labels: np.ndarray, attrs: dict[str, Any]) -> xr.DataArray:
    loc = f"{name}_loc"
    vals = np.asarray(getattr(values, "values", values), dtype=float)
    return xr.DataArray(vals, dims=(SAMPLE, loc), coords={loc: np.asarray(grid, dtype=float)}, attrs=attrs)


def _fdata(fd: dict[str, Any], name: str, labels: np.ndarray, **attrs: Any) -> xr.DataArray:
    """An fda.usc ``fdata`` object (``data``, ``argvals``, ``rangeval``) as a curve; its range is the ``domain``."""
    return _curve(fd["data"], fd["argvals"], name, labels, {**attrs, "domain": [float(v) for v in fd["rangeval"]]})


def _fda_usc_attrs(name: str, description: str) -> dict[str, Any]:
    """Provenance of data set ``name`` of fda.usc, read from the bundled ``<name>.rda``."""
    file = f"{name}.rda"
    return {"title": f"{name} data of the R package fda.usc",
            "source": f"bundled {file} of fda.usc 2.2.0, read with rdata (fdakpl/datasets/data/{file})",
            "description": description, **_FDA_USC}


def _factor(values: Any, r_name: str) -> xr.DataArray:
    cat = pd.Categorical(values)
    return xr.DataArray(np.asarray(cat.astype(str), dtype=object), dims=(SAMPLE,),
                        attrs={"levels": [str(v) for v in cat.categories], "r_class": "factor", "r_name": r_name})


def load_aemet() -> xr.Dataset:
    """fda.usc's ``aemet``: daily climate curves of 73 Spanish weather stations.

    Averages over 1980–2009 of the daily mean temperature ``temp`` (°C), wind
    speed ``wind_speed`` (m/s) and log precipitation ``logprec`` (log mm) on
    365 days (locations 0.5 … 364.5, domain ``[0, 365]`` in ``attrs``), and
    the stations' ``ind``, ``province``, ``altitude``, ``year_ini``,
    ``year_end``, ``longitude``, ``latitude``; samples are labelled by station
    name. No value is missing. Source: Agencia Estatal de Meteorología (AEMET).

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = load_aemet()
    >>> ds.sizes["sample"], ds.sizes["temp_loc"]
    (73, 365)
    """
    raw = _read("aemet.rda", "aemet")
    df = raw["df"]
    labels = np.asarray(df["name"], dtype=str)
    units = {"temp": "degrees Celsius", "wind.speed": "m/s", "logprec": "log mm"}
    data_vars: dict[str, xr.DataArray] = {}
    for col, key, r_type in (("ind", "ind", "character"), ("province", "province", "character"),
                             ("altitude", "altitude", "integer"), ("year.ini", "year_ini", "integer"),
                             ("year.end", "year_end", "integer"), ("longitude", "longitude", "double"),
                             ("latitude", "latitude", "double")):
        vals = df[col].to_numpy(dtype={"character": object, "integer": np.int32, "double": float}[r_type])
        data_vars[key] = xr.DataArray(vals.astype(str) if r_type == "character" else vals, dims=(SAMPLE,),
                                      attrs={"r_name": col, "r_type": r_type})
    for name in ("temp", "wind.speed", "logprec"):
        fd = raw[name]
        key = name.replace(".", "_")
        data_vars[key] = _fdata(fd, key, labels, long_name=str(fd["names"]["main"]), units=units[name], r_name=name,
                                location="day of the year (0.5 ... 364.5)")
    ds = xr.Dataset(data_vars, coords={SAMPLE: labels})
    ds.attrs.update(_fda_usc_attrs(
        "aemet", "Spanish weather stations, averages over 1980-2009 (AEMET, Government of Spain)"))
    return ds


def load_poblenou() -> xr.Dataset:
    """fda.usc's ``poblenou``: 115 daily curves of NOx at Poblenou (Barcelona).

    ``nox`` (µg/m³) every hour (locations 0 … 23) from 23 February to 26 June
    2005 (days with missing values removed by fda.usc), with the factors
    ``day_week`` (levels ``"1"`` … ``"7"``, Monday … Sunday) and
    ``day_festive`` (``"0"``/``"1"``) and the ``date``; samples are labelled by
    date. Reference: Febrero-Bande, Galeano and González-Manteiga (2008),
    Environmetrics 19(4), 331–345.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = load_poblenou()
    >>> ds.sizes["sample"], ds.sizes["nox_loc"], ds.day_week.attrs["levels"][0]
    (115, 24, '1')
    """
    raw = _read("poblenou.rda", "poblenou")
    df, fd = raw["df"], raw["nox"]
    labels = np.asarray(df["date"].astype(str), dtype=str)
    nox = _fdata(fd, "nox", labels, long_name="NOx levels", units="micrograms per cubic metre", r_name="nox",
                 location="hour of the day (0 ... 23)")
    ds = xr.Dataset({"date": xr.DataArray(labels.astype(object), dims=(SAMPLE,), attrs={"r_name": "date"}),
                     "day_week": _factor(df["day.week"], "day.week"),
                     "day_festive": _factor(df["day.festive"], "day.festive"), "nox": nox},
                    coords={SAMPLE: labels})
    ds.attrs.update(_fda_usc_attrs("poblenou", "hourly NOx at Poblenou, Barcelona, 2005-02-23 to 2005-06-26"))
    return ds


def load_emotion() -> xr.Dataset:
    """FDboost's ``emotion``: EEG and facial EMG of 23 participants in a gambling task.

    184 curves (each participant's average in each of the 8 study settings)
    of ``EEG`` and ``EMG`` on 384 time points (locations 1 … 384, dims
    ``EEG_loc`` and ``EMG_loc``), with the factors ``power``, ``game_outcome``,
    ``control`` (2 levels each) and ``subject`` (23 levels). Samples are
    labelled ``"<subject>_<k>"``, ``k`` = 1 … 8 the setting's row within the
    subject. Curves of one subject are dependent: split by subject when
    estimating test error. Sources: Gentsch, Grandjean and Scherer (2014),
    Biological Psychology 98, 70–81; Rügamer, Brockhaus, Gentsch, Scherer and
    Greven (2018), JRSS C 67, 621–642.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = load_emotion()
    >>> ds.sizes["sample"], ds.sizes["EMG_loc"], len(ds.subject.attrs["levels"])
    (184, 384, 23)
    """
    raw = _read("emotion.RData", "emotion")
    subject = np.asarray(pd.Categorical(raw["subject"]).astype(str))
    within = pd.Series(subject).groupby(subject).cumcount().to_numpy() + 1
    labels = np.array([f"{s}_{k}" for s, k in zip(subject, within, strict=True)])
    data_vars: dict[str, xr.DataArray] = {
        name: _factor(raw[name], name) for name in ("power", "game_outcome", "control", "subject")}
    data_vars["EEG"] = _curve(raw["EEG"], raw["s"], "EEG", labels,
                              {"long_name": "electroencephalography signal", "r_name": "EEG",
                               "location": "time point (1 ... 384)"})
    data_vars["EMG"] = _curve(raw["EMG"], raw["t"], "EMG", labels,
                              {"long_name": "facial electromyography signal", "r_name": "EMG",
                               "location": "time point (1 ... 384)"})
    ds = xr.Dataset(data_vars, coords={SAMPLE: labels})
    ds.attrs.update({"title": "emotion data of the R package FDboost",
                     "source": "bundled emotion.RData of FDboost 1.1-2, read with rdata "
                               "(fdakpl/datasets/data/emotion.RData)",
                     "license": "GPL-2, as the R package FDboost (version 1.1-2)",
                     "citation": ("Rügamer, D., Brockhaus, S., Gentsch, K., Scherer, K. and Greven, S. (2018). "
                                  "Boosting factor-specific functional historical models for the detection of "
                                  "synchronization in bioelectrical signals. JRSS C 67, 621-642.")})
    return ds
