"""Data sets: refund's DTI data (bundled) and the paper's simulated data.

Examples
--------
>>> from fdakpl import datasets
>>> ds = datasets.load_dti()
>>> ds.sizes["sample"], ds.sizes["cca_loc"], ds.sizes["rcst_loc"]
(382, 93, 55)
"""

from ._dti import DTI_ACKNOWLEDGMENT, dti_first_visits, dti_from_columns, load_dti

__all__ = ["DTI_ACKNOWLEDGMENT", "dti_first_visits", "dti_from_columns", "load_dti"]
