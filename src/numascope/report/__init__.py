"""Presentation: terminal rendering, plots, the self-contained HTML report."""
