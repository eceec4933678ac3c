"""The audit's picture: the fraction of flippable rows per group with its 95% interval,
and a histogram of the smallest change on F that flips a row."""

from __future__ import annotations

import numpy as np


def draw(df, table, by: str | None, spec, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    rows = table[table["group"] != "all"] if by is None else table[table["group"] == by]
    labels = [f"{by or 'decision'}={v}" if by else v for v in rows["value"]]
    frac = np.nan_to_num(rows["fraction"].to_numpy(dtype=float))
    lo = np.nan_to_num(rows["ci_low"].to_numpy(dtype=float))
    hi = np.nan_to_num(rows["ci_high"].to_numpy(dtype=float))
    err = np.clip(np.vstack([frac - lo, hi - frac]), 0.0, None)
    left.bar(range(len(frac)), frac, yerr=err, capsize=4, color="#4c72b0")
    left.set_xticks(range(len(frac)), labels, rotation=20, ha="right")
    left.set_ylabel("fraction flippable (95% Wilson interval)")
    left.set_title(f"rows flippable by {spec.label} (gap {spec.target.gap.value:g})")
    # a change not proven the smallest (a row past the enumeration) is left out
    proven = df["change_smallest"].fillna(True).astype(bool)
    change = df.loc[proven, "change"].dropna().to_numpy(dtype=float)
    left_out = int((~proven).sum())
    if change.size:
        right.hist(change, bins=min(40, max(5, change.size // 5)), color="#dd8452")
    else:
        right.text(0.5, 0.5, "no flippable row", ha="center", va="center")
    right.set_xlabel(f"smallest change on {spec.label} that flips\n(fraction of its range)")
    right.set_ylabel("rows")
    right.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of rows
    right.set_title(
        f"smallest change needed ({left_out} not proven, left out)"
        if left_out
        else "smallest change needed"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
