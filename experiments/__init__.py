"""Experiments reproducing the paper (Bouche et al., AISTATS 2021) with fdakpl.

Run ``python experiments/run.py table1|toy|dictionaries [--quick|--full]`` (or
``python -m experiments.dti_table1`` etc.); summaries (JSON, kept in the repository) go to
``experiments/results/``, the raw per-run records and the figures (PNG) to the git-ignored
``experiments/output/``; ``python -m experiments.report`` prints the tables from the summaries.
"""
