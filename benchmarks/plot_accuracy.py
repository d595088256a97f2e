"""Bar chart of token F1 at the gold length, test split, for every system on the three corpora, from the
``compbench evaluate`` JSON files in reports/accuracy/ (the commands that wrote them: reports/accuracy/README.md).

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
CORPORA = {"C&L written": ("clarke-lapata-written", "-labels"), "C&L broadcast": ("clarke-lapata-broadcast", "-labels"),
           "Google": ("google", "")}
# (label in the figure, file pattern ({corpus}, {labels}), system name in the file)
SYSTEMS = [
    ("first-m", "{corpus}-test-gold-baselines.json", "first-m"),
    ("chain CRF (keep/delete)", "{corpus}-test-gold-baselines.json", "chain CRF (viterbi)"),
    ("bigram model (McDonald 2006)", "{corpus}-test-gold-baselines.json", "bigram model (bigram-chain)"),
    ("subtree deletion (our parse)", "{corpus}-gold-subtree-test.json", "subtree deletion"),
    ("joint, CRF", "{corpus}-test-gold-baselines.json", "joint (resource-dp)"),
    ("joint + parse features, perceptron", "{corpus}-gold-parsed{labels}-test.json", "joint (resource-dp)"),
]


def main() -> None:
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(SYSTEMS)
    colours = plt.get_cmap("tab10")
    for i, (label, pattern, name) in enumerate(SYSTEMS):
        values = []
        for corpus, labels in CORPORA.values():
            record = json.loads((HERE / pattern.format(corpus=corpus, labels=labels)).read_text())
            values.append(record["systems"][name]["f1"])
        x = np.arange(len(CORPORA)) + (i - (len(SYSTEMS) - 1) / 2) * width
        bars = ax.bar(x, values, width, label=label, color=colours(i))
        ax.bar_label(bars, [f"{v:.3f}" for v in values], fontsize=6, rotation=90, padding=2)
    sentences = [json.loads((HERE / f"{c}-test-gold-baselines.json").read_text())["systems"]["first-m"]["sentences"]
                 for c, _ in CORPORA.values()]
    ax.set_xticks(np.arange(len(CORPORA)), [f"{name}\n({k} test sentences)" for name, k in zip(CORPORA, sentences)])
    ax.set_ylim(0.5, 0.95)
    ax.set_ylabel("token F1 (macro), gold length")
    ax.axhline(0.8, color="grey", lw=0.8, ls="--", label="0.80: the goal on written\n(Qian & Liu's F1)")
    ax.set_title("Token F1 on our test splits: the seeds' baselines beside the joint model", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="system", title_fontsize=8)
    fig.savefig(HERE / "f1-gold-length.png", dpi=120, bbox_inches="tight")


if __name__ == "__main__":
    main()
