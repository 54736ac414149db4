"""Array-level, scikit-learn compatible estimators: :class:`~fdakpl.estimators.kpl.KPLRegressor` (exact)
and :class:`~fdakpl.estimators.approx.ApproxKPLRegressor` (Nyström / random features)."""
