"""Choosing lambda and the other hyper-parameters: curve-level criteria on the ridge path, K-fold CV."""
