"""What the benchmarks share: the line every benchmark prints first (when it ran, the machine's cores and its load:
this machine is shared), and a run of Python in a fresh process that reports in JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def machine_line(when: str = "at the start") -> str:
    """``# 2026-11-25 10:46, 2 cores, load average 0.94 0.87 1.11 at the start``."""
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    return f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average {load} {when}"


def fresh_process(arguments: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> dict:
    """The JSON object ``python arguments`` prints last, run in a fresh process; on failure, exit with the end of its
    stderr."""
    done = subprocess.run([sys.executable, *arguments], env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
