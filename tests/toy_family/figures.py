"""The toy family's figure: each case's median rate, written on its bar, with the interval
of the median where there are enough repetitions, and a caption (the figures' protocol,
docs/architecture.md "Figures")."""


def figures(results):
    toy = [r for r in results if r.family == "toy"]
    if not toy:
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from numascope.plotting.marks import Medians, captioned, errorbars, write_values
    fig, ax = plt.subplots(figsize=(4, 3))
    med = Medians()
    drawn = [med.of(r.metrics["rate"], r.params) for r in toy]
    x = list(range(len(toy)))
    ys = [d[0] for d in drawn]
    ax.bar(x, ys)
    errorbars(ax, x, ys, [d[1] for d in drawn], [d[2] for d in drawn])
    write_values(ax, x, ys, [d[2] for d in drawn])
    ax.set_xticks(x, [r.case for r in toy], fontsize=7)
    ax.set_ylabel("rate (Melem/s), median")
    fig.tight_layout()
    return [("toy rate", captioned(fig, "Elements summed per microsecond (Melem/s), per case. "
                                   + med.text()))]
