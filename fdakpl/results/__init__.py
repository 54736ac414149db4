"""Fitted-model results of the formula front end: predictions, summaries, plots.

Examples
--------
>>> from fdakpl.results import FunctionalRegressionResults
>>> FunctionalRegressionResults.__name__
'FunctionalRegressionResults'
"""

from .core import FunctionalRegressionResults

__all__ = ["FunctionalRegressionResults"]
