"""Experiments reproducing the paper (Bouche et al., AISTATS 2021) with fdakpl.

Run ``python experiments/run.py table1|toy|dictionaries [--quick|--full]`` (or
``python -m experiments.dti_table1`` etc.); results (JSON) and figures (PNG)
go to ``experiments/results/``.
"""
