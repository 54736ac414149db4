"""Input and output at the edges: netCDF model files (:mod:`fdakpl.io.netcdf`) and R (:mod:`fdakpl.io.r`)."""
