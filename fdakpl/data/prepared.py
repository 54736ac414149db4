"""Inputs and responses checked and converted once, at the boundary, and handed inward as they are.

A front end (the formula interface) validates its data once and converts it to arrays with
:func:`~fdakpl.data.preprocessing.prepare_inputs` and :func:`~fdakpl.data.preprocessing.prepare_response`;
wrapped in these containers, the arrays go to an estimator's ``fit`` / ``predict``, which take them as they
are instead of checking and converting them again (the two ``prepare_*`` functions return their contents).

Examples
--------
>>> import numpy as np
>>> from fdakpl.data.preprocessing import prepare_inputs
>>> X = PreparedInputs(*prepare_inputs(np.zeros((3, 2))))
>>> prepare_inputs(X)[0] is X.values
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .functional import Observations

__all__ = ["PreparedInputs", "PreparedResponse"]


@dataclass(frozen=True)
class PreparedInputs:
    """What :func:`~fdakpl.data.preprocessing.prepare_inputs` returned: values, quadrature weights, spec, labels.

    ``checked_spec`` is the fitted model's input spec the inputs were checked against (``spec=`` of
    ``prepare_inputs``), None for training inputs; a model refuses new inputs checked against another spec.
    """

    values: Any
    weights: Any
    spec: Any
    labels: np.ndarray | None
    checked_spec: Any = None


@dataclass(frozen=True)
class PreparedResponse:
    """What :func:`~fdakpl.data.preprocessing.prepare_response` returned: the observations and their labels.

    Examples
    --------
    >>> from fdakpl.data.preprocessing import prepare_response
    >>> Y = PreparedResponse(*prepare_response(np.array([[1.0, 2.0], [3.0, 4.0]])))
    >>> prepare_response(Y)[0] is Y.obs
    True
    """

    obs: Observations
    info: Any
