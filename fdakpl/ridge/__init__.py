"""The ridge layer: one prepared problem, one fitted ridge path.

- :mod:`fdakpl.ridge.problem`: :class:`~fdakpl.ridge.problem.KPLProblem`, the validated training data of
  a KPL fit with everything that does not depend on the kernel, ``B`` or lambda (centred responses,
  fitted dictionary, Gram matrix, integration weights, projections), built once at the edge;
- :mod:`fdakpl.ridge.path`: :class:`~fdakpl.ridge.path.RidgePath`, the decompositions of one kernel
  matrix and one ``B``, which answer every lambda (coefficients, exact leave-one-curve-out and
  leave-one-group-out errors, GCV, effective degrees of freedom) without refitting;
- :mod:`fdakpl.ridge.quadratics`: the per-curve quadratic forms behind every curve-level criterion (the
  one leave-one-out formula of the package).
"""
