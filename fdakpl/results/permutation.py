"""The result of a permutation test (:meth:`fdakpl.FunctionalRegressionResults.permutation_test`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["PermutationTestResult", "format_pvalue"]


def format_pvalue(p: float, n_permutations: int) -> str:
    """A permutation p-value as printed: ``"< 1/(B+1)"`` at its floor (the data beat every permutation), else
    2 significant digits.

    Examples
    --------
    >>> format_pvalue(0.005, 199), format_pvalue(0.0351, 199), format_pvalue(1 / 20, 19)
    ('< 0.005', '0.035', '< 0.05')
    """
    floor = 1.0 / (n_permutations + 1)
    if p <= floor * (1 + 1e-9):
        return f"< {floor:.2g}"
    return f"{p:.2g}"

#: the keys of the dict that ``permutation_test`` returned up to version 0.x, and the attributes they are now
_OLD_KEYS = {"term": "term", "statistic": "statistic", "null": "null_distribution", "p_value": "pvalue",
             "n_permutations": "n_permutations"}


@dataclass(frozen=True, repr=False)
class PermutationTestResult:
    """A permutation test of no association between the response and one term, as ``scipy.stats`` reports tests.

    Attributes
    ----------
    statistic : float
        The observed statistic: the leave-one-curve-out error of the fitted model.
    pvalue : float
        ``(1 + #{null <= statistic}) / (n_permutations + 1)``: small when the fitted model
        predicts held-out curves better than models fitted on permuted values of ``term``.
    null_distribution : numpy.ndarray
        The statistic under each permutation.
    term : str
        The term or covariate whose values were permuted.
    response : str
        The response.
    n_permutations : int
    scheme : str
        What the permutations exchange (curves, group-level values or whole groups).
    statistic_name : str
        The held-out error used as statistic.

    Examples
    --------
    >>> import numpy as np
    >>> r = PermutationTestResult(statistic=1.0, pvalue=0.05, null_distribution=np.arange(2.0, 21.0),
    ...                           term="cca", response="rcst")
    >>> r.pvalue, r.n_permutations
    (0.05, 19)
    >>> print(r)  # doctest: +NORMALIZE_WHITESPACE
    Permutation test: no association between rcst and cca
      statistic (leave-one-curve-out error): 1
      p-value: < 0.05 (19 permutations; the smallest attainable is 0.05)
      permutations: curves permuted
      null distribution: median 11, 5% to 95% range 2.9 to 19.1
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray
    term: str
    response: str = "the response"
    n_permutations: int = field(default=-1)
    scheme: str = "curves permuted"
    statistic_name: str = "leave-one-curve-out error"

    def __post_init__(self) -> None:
        null = np.asarray(self.null_distribution, dtype=float)
        object.__setattr__(self, "null_distribution", null)
        if self.n_permutations < 0:
            object.__setattr__(self, "n_permutations", int(null.size))

    def __str__(self) -> str:
        null = self.null_distribution
        lo, med, hi = np.percentile(null, [5, 50, 95]) if null.size else (np.nan,) * 3
        return "\n".join([
            f"Permutation test: no association between {self.response} and {self.term}",
            f"  statistic ({self.statistic_name}): {self.statistic:.4g}",
            f"  p-value: {format_pvalue(self.pvalue, self.n_permutations)} ({self.n_permutations} permutations; the "
            f"smallest attainable is {1 / (self.n_permutations + 1):.2g})",
            f"  permutations: {self.scheme}",
            f"  null distribution: median {med:.4g}, 5% to 95% range {lo:.4g} to {hi:.4g}",
        ])

    def __repr__(self) -> str:
        return (f"PermutationTestResult(term={self.term!r}, statistic={self.statistic:.4g}, pvalue={self.pvalue:.4g}, "
                f"n_permutations={self.n_permutations})")

    def __getitem__(self, key: str) -> Any:
        """The dict keys of earlier versions (``res["p_value"]``), deprecated: use the attributes."""
        if key not in _OLD_KEYS:
            raise KeyError(f"{key!r}; a PermutationTestResult has the attributes statistic, pvalue, "
                           "null_distribution, term, response, n_permutations")
        warnings.warn(f"result[{key!r}] is deprecated: use result.{_OLD_KEYS[key]}", DeprecationWarning,
                      stacklevel=2)
        return getattr(self, _OLD_KEYS[key])
