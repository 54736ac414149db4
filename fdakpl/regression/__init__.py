"""The formula front end: ``FunctionalRegression`` and the steps of its fit."""
