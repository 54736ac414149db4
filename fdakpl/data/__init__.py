"""The data layer: xarray conventions, dense and long forms, quadrature, inputs, responses, centring.

Nothing here imports another part of fdakpl.
"""
