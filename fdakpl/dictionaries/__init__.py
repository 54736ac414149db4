"""Dictionaries of functions on a one-dimensional domain.

A dictionary ``phi = (phi_1, ..., phi_d)`` maps coefficients ``u`` to the
function ``sum_l u_l phi_l`` (the projection operator of the paper). Every
dictionary here offers

* :meth:`Dictionary.evaluate` -- the ``(m, d)`` matrix ``phi_l(theta_p)`` at any
  locations inside its domain;
* :meth:`Dictionary.gram` -- the Gram matrix ``Phi^# Phi = (<phi_l, phi_l'>)``,
  exact where a closed form exists, exact for the piecewise-linear interpolant
  of grid-defined atoms, and Gauss--Legendre quadrature otherwise;
* ``scales_`` -- a per-atom scale (wavelet level, frequency,
  component rank) used by scale-dependent output matrices;
* :attr:`Dictionary.domain`.

Dictionaries that depend on data (FPCA, learnt, and wavelets whose resolution
follows the response grid) are set up by :meth:`Dictionary.fit`, which the
estimator calls with the training responses.

The size of a dictionary is ``n_atoms`` (:class:`BSpline`, :class:`FPCA`,
:class:`RandomFourier`, :class:`Learned`), except :class:`Fourier`'s
``n_freqs`` (``2 n_freqs + 1`` atoms) and :class:`Wavelet`'s ``level``.

Examples
--------
>>> from fdakpl.dictionaries import BSpline, Fourier
>>> BSpline(8, domain=(0, 1)).fit().n_atoms_, Fourier(3, domain=(0, 1)).fit().n_atoms_
(8, 7)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import Dictionary
from .bspline import BSpline
from .fourier import Fourier, RandomFourier
from .fpca import FPCA
from .learned import Learned
from .piecewise import PiecewiseLinear
from .wavelet import Wavelet, discrete_wavelets

__all__ = [
    "FPCA",
    "RENAMED_PARAMETERS",
    "BSpline",
    "Dictionary",
    "Fourier",
    "Learned",
    "PiecewiseLinear",
    "RandomFourier",
    "Wavelet",
    "default_dictionary",
    "make_dictionary",
    "output_dictionary",
]


#: size parameters renamed in 0.x (old -> new): one name per meaning across the dictionaries
RENAMED_PARAMETERS = {"n_basis": "n_atoms", "n_components": "n_atoms", "n_features": "n_atoms", "levels": "level"}

_FAMILIES: dict[str, type[Dictionary]] = {
    "fourier": Fourier,
    "bspline": BSpline,
    "rff": RandomFourier,
    "random_fourier": RandomFourier,
    "fpca": FPCA,
    "piecewise_linear": PiecewiseLinear,
    "hat": PiecewiseLinear,
    "learned": Learned,
    "learnt": Learned,
}


#: ``dictionary="auto"`` is the piecewise-linear basis on the observed locations up to this many of them
AUTO_PIECEWISE_MAX = 21


def default_dictionary(n_locations: int) -> Dictionary:
    """The dictionary of ``dictionary="auto"`` for responses observed at ``n_locations`` distinct locations:
    the piecewise-linear basis on them up to ``AUTO_PIECEWISE_MAX`` (21), else Fourier with 10 frequencies.

    Examples
    --------
    >>> default_dictionary(12), default_dictionary(55)
    (PiecewiseLinear(grid=None, domain=None), Fourier(n_freqs=10, domain=None))
    """
    return PiecewiseLinear() if n_locations <= AUTO_PIECEWISE_MAX else Fourier(n_freqs=10)


def make_dictionary(spec: str | Dictionary, **kwargs: Any) -> Dictionary:
    """Build a dictionary from a name such as ``"db3"``, ``"fourier"`` or ``"fpca"``.

    Parameters
    ----------
    spec : str or Dictionary
        A family name (``"fourier"``, ``"bspline"``, ``"rff"``, ``"fpca"``,
        ``"learned"``) or any PyWavelets discrete wavelet name (``"db3"``,
        ``"sym4"``, ...). A :class:`Dictionary` is returned unfitted-copied.
    **kwargs
        Arguments of the family's constructor: ``n_atoms`` (the number of atoms of
        :class:`BSpline`, :class:`FPCA`, :class:`RandomFourier`, :class:`Learned`),
        ``n_freqs`` (:class:`Fourier`, ``2 n_freqs + 1`` atoms), ``level`` (wavelets), ...
        The names used before 0.x (``n_basis``, ``n_components``, ``n_features``, ``levels``)
        are refused with the new name.

    Returns
    -------
    Dictionary

    Examples
    --------
    >>> make_dictionary("db3", level=4)
    Wavelet(wavelet='db3', level=4, mode='symmetric', resolution=None, domain=None)
    >>> make_dictionary("bspline", n_atoms=8)
    BSpline(n_atoms=8, degree=3, domain=None)
    """
    if isinstance(spec, Dictionary):
        if kwargs:
            raise ValueError("pass dictionary options to the dictionary's constructor, not alongside it")
        return spec.unfitted_copy()
    if not isinstance(spec, str):
        raise TypeError(f"dictionary must be a name or a Dictionary, got {type(spec).__name__}")
    key = spec.lower()
    old = sorted(set(kwargs) & set(RENAMED_PARAMETERS))
    if old:
        raise TypeError(f"make_dictionary({spec!r}, ...): {old[0]}= was renamed "
                        f"{RENAMED_PARAMETERS[old[0]]}= (one name per meaning across dictionaries)")
    if key in _FAMILIES:
        return _FAMILIES[key](**kwargs)
    if key in discrete_wavelets():  # built once
        return Wavelet(key, **kwargs)
    raise ValueError(
        f"unknown dictionary {spec!r}; use one of {sorted(_FAMILIES)} or a PyWavelets discrete "
        "wavelet name such as 'db3'"
    )


def output_dictionary(spec: str | Dictionary, locations: Any) -> Dictionary:
    """The unfitted output dictionary of an estimator's ``dictionary`` parameter.

    ``"auto"`` (the estimators' default) gives hat functions on the response locations when
    there are at most 21 distinct ones, else Fourier with 10 frequencies (:func:`default_dictionary`);
    anything else goes to :func:`make_dictionary`.

    Parameters
    ----------
    spec : str or Dictionary
    locations : array-like
        The response locations (only counted for ``"auto"``).

    Examples
    --------
    >>> output_dictionary("auto", [0.0, 0.5, 1.0, 0.5])
    PiecewiseLinear(grid=None, domain=None)
    >>> type(output_dictionary("auto", range(100))).__name__
    'Fourier'
    """
    if isinstance(spec, str) and spec == "auto":
        return default_dictionary(np.unique(np.asarray(locations)).size)
    return make_dictionary(spec)
