"""Utilities every layer may use: progress bars, notices (warnings said once), docstring pieces."""
