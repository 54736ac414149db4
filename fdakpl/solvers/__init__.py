"""Solvers: pure functions of arrays.

- :mod:`fdakpl.solvers.closed_form`: the closed-form ridge (eigendecompositions, Sylvester), plug-in projections;
- :mod:`fdakpl.solvers.iterative`: L-BFGS-B on integral losses, the exact partial ridge;
- :mod:`fdakpl.solvers.streaming`: the primal (Nyström / random-feature) statistics, reduced chunk by chunk.
"""
