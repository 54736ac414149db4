"""The paper's excess-risk bounds (section 5) and whether they apply to a fit."""
