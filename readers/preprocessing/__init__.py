"""The user's feature space: preprocessing (one-hot groups, scikit-learn pipelines)
folded into the Ensemble IR, so that features, bounds and witnesses are the user's
columns in the user's units (fold.py does the folding; one module per source of maps)."""
