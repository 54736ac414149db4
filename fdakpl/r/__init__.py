"""R at the edge: rpy2 converters (R data.frames to xarray) and the reticulate entry points of the R package."""
