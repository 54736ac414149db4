library(testthat)
library(fdakpl)

test_check("fdakpl")
