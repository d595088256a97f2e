"""benchmarks/gpu_profile.py's reading of a profiler trace: busy time, idle gaps and totals, and what it says when
the trace holds nothing it can read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
gpu_profile = pytest.importorskip("gpu_profile")


def _event(cat: str, name: str, ts: float, dur: float, **args: object) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": args}


def test_the_timeline_sums_the_gpu_s_busy_union_gaps_and_kinds() -> None:
    trace = {"traceEvents": [
        _event("cuda_runtime", "cudaLaunchKernel", 1000.0, 5.0),
        _event("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 1010.0, 100.0, stream=13, bytes=2_200_000),
        _event("kernel", "_decode_shared", 1100.0, 400.0, stream=13, grid=[512, 1, 1], block=[64, 1, 1]),
        _event("kernel", "_decode_shared", 1300.0, 400.0, stream=14),  # overlaps the one before: busy once
        _event("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 2000.0, 50.0, stream=7, bytes=100_000),
        {"ph": "i", "name": "a marker", "ts": 0.0},  # not a complete event: ignored
    ]}
    lines = gpu_profile.timeline(trace, wall_seconds=0.0011)
    text = "\n".join(lines)
    assert lines[0] == "  wall 1.100 ms"
    # from 1010 to 1700 busy (690 us), idle 1700..2000, then 50 us: busy 0.740 ms, one gap of 0.300 ms
    assert "busy 0.740 ms; 1 idle gaps, 0.300 ms, the longest 0.300 ms at 0.700" in text
    assert "first event at 0.010 ms, last ends at 1.050 ms" in text
    assert "kernel: 2 events, 0.800 ms" in text
    assert "gpu_memcpy: 2 events, 0.150 ms, 2.3 MB" in text
    assert "CUDA API on the host: cudaLaunchKernel 0.005 ms" in text
    assert "stream 13, grid [512, 1, 1] block [64, 1, 1]" in text


def test_a_gpu_never_idle_has_no_gaps_to_name() -> None:
    lines = gpu_profile.timeline({"traceEvents": [_event("kernel", "k", 0.0, 500.0)]}, 0.0005)
    assert lines[1] == "  GPU: first event at 0.000 ms, last ends at 0.500 ms, busy 0.500 ms; 0 idle gaps, 0.000 ms"


def test_a_trace_without_gpu_events_says_so_and_names_what_it_saw() -> None:
    trace = {"traceEvents": [_event("cpu_op", "aten::add", 0.0, 3.0), _event("python_function", "f", 1.0, 1.0)]}
    said = gpu_profile.timeline(trace, 0.001)[-1]
    assert said == "  no GPU events recorded (categories seen: cpu_op, python_function)"
    assert gpu_profile.timeline({"traceEvents": []}, 0.001) == ["  no events recorded"]
