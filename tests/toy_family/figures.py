"""The toy family's figure: the rate of each repetition."""


def figures(results):
    toy = [r for r in results if r.family == "toy"]
    if not toy:
        return []
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(4, 3))
    for r in toy:
        ax.plot(r.metrics["rate"].values, marker="o", label=r.case)
    ax.set_xlabel("repetition")
    ax.set_ylabel("Melem/s")
    ax.legend()
    return [("toy rate", fig)]
