"""Input and output at the edges: netCDF model files (:mod:`fdakpl.io.netcdf`) (R lives in :mod:`fdakpl.r`)."""
