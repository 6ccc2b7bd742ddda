"""Plots, one module per benchmark family. Each module defines

    def figures(results: list[BenchResult]) -> list[tuple[str, matplotlib.figure.Figure]]

returning (title, figure) pairs for whichever of `results` it knows how to draw (its own
family), an empty list otherwise. Commands save them (`--plot FILE`); the HTML report
embeds them. Always use the Agg backend (`matplotlib.use("Agg")` before pyplot)."""
