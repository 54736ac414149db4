"""Command-line entry of the experiments: ``python experiments/run.py table1|toy|dictionaries [options]``.

``table1``: the DTI Table 1 (:mod:`experiments.dti_table1`); ``toy``: the toy
robustness figure (:mod:`experiments.toy_robustness`); ``dictionaries``:
representation and test errors against the number of atoms
(:mod:`experiments.dictionaries`). Options go to the experiment
(``--quick`` by default, ``--full`` for the paper's protocol, ``--n-jobs``).
Run heavy jobs with ``nice``, e.g. ``nice -n 10 python experiments/run.py table1 --full``.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

COMMANDS = {"table1": "experiments.dti_table1", "toy": "experiments.toy_robustness",
            "dictionaries": "experiments.dictionaries"}


def main(argv: list[str] | None = None) -> int:
    import importlib

    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        print(f"usage: python experiments/run.py {{{','.join(COMMANDS)}}} [--quick|--full] [options]")
        return 2
    module = importlib.import_module(COMMANDS[argv[0]])
    return int(module.main(argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main())
