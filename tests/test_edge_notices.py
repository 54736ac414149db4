"""Edge notices (issue 25, item 6): once, at the user's line, in res.notes and the summary, with the real grid and
advice that fits the case."""

import warnings

import numpy as np

from fdakpl import FunctionalRegression, datasets


def test_scalar_covariates_at_the_widest_width_are_a_note_not_extend_the_grid():
    ds = datasets.dti_first_visits()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = FunctionalRegression("rcst ~ cca + pasat", ds, interpolate_inputs=True, progress=False).fit()
    assert res.tuning.multiples[res.tuning.terms.index("scalars")] == 16  # the widest of the default grid
    assert not [w for w in caught if "'scalars'" in str(w.message)]  # no warning about a grid to extend
    note = [n for n in res.notes if "numeric scalar covariates" in n]
    assert len(note) == 1 and "grid [4, 8, 16]" in note[0] and "change the predictions little" in note[0]
    assert "extend" not in note[0]
    assert "change the predictions little" in " ".join(str(res.summary()).split())


def test_lambda_edge_by_value_on_an_unsorted_grid_once_at_the_user_line():
    ds = datasets.dti_first_visits()
    grid = [1e-2, 1e-8, 1.0, 1e-5]  # unsorted: the last position holds an interior value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, lam=grid, width_grid=None,
                                   b_grid=None, dictionary="fourier", progress=False).fit()
    edge = [w for w in caught if "lambda" in str(w.message) and "grid" in str(w.message)]
    chosen = res.lam
    at_edge = chosen in (min(grid), max(grid))
    assert res.lam_on_edge == at_edge
    if at_edge:
        assert len(edge) == 1 and edge[0].filename == __file__  # once, pointing at this file
        assert "1e-08, 1e-05, 0.01, 1" in str(edge[0].message)  # the real grid, sorted
        assert str(edge[0].message) in res.notes
    else:
        assert not edge
    # an interior choice at the last position of an unsorted grid is not on the edge
    res2 = FunctionalRegression("rcst ~ cca", ds, interpolate_inputs=True, lam=[1.0, 1e-8, float(chosen)],
                                width_grid=None, b_grid=None, dictionary="fourier", progress=False).fit()
    assert res2.lam == chosen and res2.lam_on_edge == (chosen in (1.0, 1e-8))
    assert np.isfinite(res2.lam)
