"""Statistics, comparisons, fleet outliers, advice."""
