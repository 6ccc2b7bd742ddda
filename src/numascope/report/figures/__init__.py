"""The report's own figures, drawn over many runs or nodes (comparison, fleet), and
`render`, a figure as HTML. The families' figures and the kit they share (marks,
save_figures) are `numascope.plotting`, below the families."""
