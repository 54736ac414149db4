"""The result of a permutation test (:meth:`fdakpl.FunctionalRegressionResults.permutation_test`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["PermutationTestResult"]

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
        The term whose values were permuted.
    response : str
        The response.
    n_permutations : int

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
      p-value: 0.05 (19 permutations; the smallest attainable is 0.05)
      null distribution: median 11, 5% to 95% range 2.9 to 19.1
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray
    term: str
    response: str = "the response"
    n_permutations: int = field(default=-1)

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
            f"  statistic (leave-one-curve-out error): {self.statistic:.4g}",
            f"  p-value: {self.pvalue:.4g} ({self.n_permutations} permutations; the smallest attainable is "
            f"{1 / (self.n_permutations + 1):.2g})",
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
