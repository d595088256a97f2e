"""The line every benchmark prints first: when it ran, the machine's cores and its load (this machine is shared)."""

from __future__ import annotations

import os
import time


def machine_line(when: str = "at the start") -> str:
    """``# 2026-11-25 10:46, 2 cores, load average 0.94 0.87 1.11 at the start``."""
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    return f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average {load} {when}"
