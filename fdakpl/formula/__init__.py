"""Formulas: the scalar grammar and its interpreter, the terms of a formula and their kernels."""
