"""The accuracy figure: token F1 against compression rate and time per sentence, from ``compbench evaluate``'s JSON
records (``compbench plot`` draws it for such a file, beside the run files' figures)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from compbench.problem import is_finite_number

from .styles import drawn, new_figure, save_figure


def read_accuracy(path: str | os.PathLike) -> dict | None:
    """The record of a ``compbench evaluate`` JSON file (one object with ``systems``), or None for anything else
    (e.g. a JSONL run file)."""
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("systems"), dict) else None


ACCURACY_NUMBERS = ("f1", "compression_rate", "answered_f1", "answered_compression_rate", "answered_sentences",
                    "sentences", "seconds_per_solve")  # what plot_accuracy reads of a system's row


def malformed_accuracy(data: dict) -> str | None:
    """What a ``compbench evaluate`` record holds that :func:`plot_accuracy` cannot read (field and why), or None:
    each system an object whose figures are numbers, a compression rate wherever there is an F1, and each
    sentence's F1 (read by ``compbench accuracy-report``) a list of numbers.

    >>> print(malformed_accuracy({"systems": {"a": {"f1": 0.5}}}))
    systems.a.compression_rate: expected a number beside f1, got None
    """
    for name, row in data["systems"].items():
        if not isinstance(row, dict):
            return f"systems.{name}: expected an object, got {row!r}"[:200]
        for key in ACCURACY_NUMBERS:
            if row.get(key) is not None and not is_finite_number(row[key]):
                return f"systems.{name}.{key}: expected a number, got {row[key]!r}"[:200]
        if row.get("f1") is not None and row.get("compression_rate") is None:
            return f"systems.{name}.compression_rate: expected a number beside f1, got None"
        if row.get("failed") and row.get("answered_f1") is not None:  # the answered share is named in the legend
            for key in ("answered_sentences", "sentences"):
                if row.get(key) is None:
                    return f"systems.{name}.{key}: expected a number beside failed and answered_f1, got None"
        per_sentence = row.get("f1_per_sentence")
        if per_sentence is not None and not (isinstance(per_sentence, list) and all(map(is_finite_number,
                                                                                          per_sentence))):
            return f"systems.{name}.f1_per_sentence: expected a list of numbers, got {per_sentence!r}"[:200]
    return None


def plot_accuracy(records: dict[str, dict], out: Path) -> list[str]:
    """F1 vs compression rate and F1 vs time per sentence, one colour per evaluate record (corpus and length)."""
    fig, (rate_ax, time_ax) = new_figure("token F1 against human compressions (test split)\n(hollow: an inexact "
                                      "solver's F1 over the sentences it answered, i.e. certified)", ncols=2)
    fig.set_size_inches(16.0, 7.0)
    for index, (path, data) in enumerate(records.items()):
        label = drawn(f"{data.get('corpus', Path(path).stem)}, length {data.get('length', '?')}")
        colour = f"C{index % 10}"
        labelled: set[Any] = set()  # one legend entry per file and axis
        for rank, (name, row) in enumerate(data["systems"].items()):
            if row.get("f1") is None:
                continue
            name = drawn(name)
            f1, rate, hollow = row["f1"], row["compression_rate"], False
            if row.get("failed") and row.get("answered_f1") is not None:  # unanswered sentences are no compression
                f1, rate, hollow = row["answered_f1"], row.get("answered_compression_rate", rate), True
                name = f"{name}: {row['answered_sentences']}/{row['sentences']} answered"
            ms = 1000 * (row.get("seconds_per_solve") or 0.0)
            points = [(rate_ax, rate)] + ([(time_ax, ms)] if ms > 1e-2 else [])  # first-m: 0 ms
            for ax, x in points:
                ax.scatter(x, f1, color=colour, facecolors="none" if hollow else colour,
                           label=None if ax in labelled else label)
                ax.annotate(name, (x, f1), fontsize=6.5, xytext=(4, -9 + 6 * (rank % 4)), textcoords="offset points",
                            color=colour)
                labelled.add(ax)
    rate_ax.set_title("F1 against compression rate")
    time_ax.set_title("F1 against time per sentence")
    rate_ax.set_xlabel("compression rate (kept / original tokens)")
    time_ax.set_xlabel("mean ms per sentence (log)")
    time_ax.set_xscale("log")
    for ax in (rate_ax, time_ax):
        ax.set_ylabel("token F1 (per-sentence macro average)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    return save_figure(fig, out, "accuracy")
