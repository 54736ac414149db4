"""Solvers: pure functions of arrays.

- :mod:`fdakpl.solvers.closed_form`: the closed-form ridge (eigendecompositions, Sylvester), plug-in projections;
- :mod:`fdakpl.solvers.shifted`: many shifted systems ``(K + t I) z = b`` (the single-lambda closed form);
- :mod:`fdakpl.solvers.points`: the observed points as a design, and the KPL objective on them;
- :mod:`fdakpl.solvers.iterative`: L-BFGS-B on integral losses with estimated gradients;
- :mod:`fdakpl.solvers.partial`: the exact ridge of partially observed curves (preconditioned CG);
- :mod:`fdakpl.solvers.dispatch`: which solver runs for a loss and a solver name;
- :mod:`fdakpl.solvers.streaming`: the primal (Nyström / random-feature) statistics, reduced chunk by chunk.

Examples
--------
>>> import numpy as np
>>> from fdakpl.solvers.closed_form import decompose, ridge_coef
>>> K, G, B, C = np.eye(3), np.eye(2), np.eye(2), np.ones((3, 2))
>>> ridge_coef(decompose(K, G, B, C), 1.0 / 3).tolist()  # (K + n lam I)^-1 C with n lam = 1
[[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]
"""
