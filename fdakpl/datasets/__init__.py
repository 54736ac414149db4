"""Data sets: refund's DTI data (through R's refund when installed, else bundled) and refund's others.

Examples
--------
>>> from fdakpl import datasets
>>> ds = datasets.load_dti()
>>> ds.sizes["sample"], ds.sizes["cca_loc"], ds.sizes["rcst_loc"]
(382, 93, 55)
"""

from ._bundled import load_aemet, load_emotion, load_poblenou
from ._dti import DTI_ACKNOWLEDGMENT, dti_first_visits, dti_from_columns, load_dti, load_refund, refund_available

__all__ = ["DTI_ACKNOWLEDGMENT", "dti_first_visits", "dti_from_columns", "load_dti", "load_refund", "refund_available"]

# the paper's toy data and corruptions (fdakpl.datasets.toy)
from .toy import CORRUPTIONS, corrupt, make_toy, noise_for_snr, signal_to_noise

__all__ += ["CORRUPTIONS", "corrupt", "make_toy", "noise_for_snr", "signal_to_noise"]

# real data of fda.usc (aemet, poblenou) and FDboost (emotion), bundled (fdakpl.datasets._bundled)
__all__ += ["load_aemet", "load_emotion", "load_poblenou"]

# simulated linear function-on-function data with a known coefficient surface (fdakpl.datasets.surface)
from .surface import make_linear_surface, true_surface  # noqa: E402

__all__ += ["make_linear_surface", "true_surface"]
