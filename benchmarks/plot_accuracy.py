"""Bar chart of token F1 per system and corpus from the ``compbench evaluate`` JSON files in reports/accuracy/.

Usage: .venv/bin/python benchmarks/plot_accuracy.py  (writes reports/accuracy/f1-gold-length.png)
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parents[1] / "reports" / "accuracy"
RUNS = {"written": "clarke-lapata-written-gold.json", "broadcast": "clarke-lapata-broadcast-gold.json",
        "google": "google-gold.json"}


def main() -> None:
    records = {name: json.loads((HERE / file).read_text()) for name, file in RUNS.items()}
    systems = ["first-m", "bigram-only", "tree-only", "joint"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.2
    for i, system in enumerate(systems):
        values = [next(v["f1"] for k, v in r["systems"].items() if k.split(" (")[0] == system)
                  for r in records.values()]
        ax.bar(np.arange(len(records)) + (i - 1.5) * width, values, width, label=system)
    ax.set_xticks(np.arange(len(records)), [f"{n}\n({r['systems']['first-m']['sentences']} test sentences)"
                                             for n, r in records.items()])
    ax.set_ylim(0.5, 0.9)
    ax.set_ylabel("token F1 (macro), gold length")
    ax.axhline(0.8, color="grey", lw=0.8, ls="--")
    ax.legend(ncol=4, fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(HERE / "f1-gold-length.png", dpi=120)


if __name__ == "__main__":
    main()
