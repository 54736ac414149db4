"""DTI's own gaps (issue 24, item 1): the default integration against the plug-in, held out.

21 of DTI's 100 first-visit ``rcst`` curves miss points, so ``integration="auto"`` changed the default fit there
(the curves' interpolants instead of the plug-in). Paired on the accuracy benchmark's 20 random 70/30 splits
(``benchmarks/accuracy_data.py``, mean curve SSE of the test curves).
Writes ``benchmarks/results/integration_dti.json``.
Run: ``python benchmarks/integration_dti.py`` (about 5 minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from _results import write_results
from accuracy_data import BENCHMARKS, heldout_error

from fdakpl import FunctionalRegression

OUT = Path(__file__).parent / "results" / "integration_dti.json"


def main() -> None:
    b = BENCHMARKS["dti"]
    ds = b.load()
    out: dict[str, list[float]] = {"auto": [], "plugin": []}
    for tr, te in b.splits(ds):
        for integration in out:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = FunctionalRegression(b.formula, ds.isel(sample=tr), interpolate_inputs=True, progress=False,
                                           integration=integration).fit()
            pred = res.predict(ds.isel(sample=te)).values
            out[integration].append(heldout_error(ds[b.response].values[te], pred, b.error))
    write_results(OUT, {"benchmark": "integration_dti", "issue": 24, "splits": b.split_label,
                        "mean_curve_sse": {k: float(np.mean(v)) for k, v in out.items()},
                        "auto_wins": int(np.sum(np.array(out["auto"]) < np.array(out["plugin"]))),
                        "per_split": out})


if __name__ == "__main__":
    main()
