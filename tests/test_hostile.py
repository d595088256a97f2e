"""Hostile and malformed instance files: each is refused with one line naming the file (and the line or instance and
the field where there is one), exit status 2 from the command line and InstanceError from the API."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import compbench
from compbench import InstanceError

ENV = {**os.environ, "MPLCONFIGDIR": "/tmp/compbench-mpl"}


def example() -> dict:
    return compbench.io.problem_to_dict(compbench.generate("gaussian", n=3, seed=0, length=2))


def with_scores(field: str, value) -> bytes:
    record = example()
    record["scores"][field] = value
    return json.dumps(record).encode()


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def npz_declaring(shape: tuple[int, ...]) -> bytes:
    """A zip whose member's .npy header declares ``shape`` of float64 but holds no data."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = shape
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(member, header)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("arc_0.npy", member.getvalue())
        archive.writestr("meta.npy", b"")
    return buffer.getvalue()


GOOD = example()

# name: (file name, content, a fragment the message must contain)
HOSTILE = {
    "non-utf8-json": ("bad.json", b'{"format": "compbench.instance/1", "id": "\xff\xfe"}', "not UTF-8 text (byte"),
    "non-utf8-jsonl-line-2": ("bad.jsonl", json.dumps(GOOD).encode() + b"\n\xc3\x28\n", "line 2: not UTF-8"),
    "lone-surrogate-token": ("bad.json", json.dumps({**GOOD, "tokens": ["\ud800", "b", "c"]}).encode(),
                             "tokens[0]: not valid Unicode"),
    "400-digit-integer": ("bad.json", with_scores("token", [int("9" * 400), 0, 0]), "integer literal of 400 digits"),
    "deep-nesting": ("bad.json", b'{"scores": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    "number-as-string": ("bad.json", with_scores("token", ["1.5", 0, 0]), "scores.token: expected a number or null "
                                                                          "at index (0,), got '1.5'"),
    "minus-inf-as-string": ("bad.json", with_scores("token", ["-inf", 0, 0]), "got '-inf'"),
    "boolean-score": ("bad.json", with_scores("token", [True, 0, 0]), "scores.token: expected a number or null"),
    "nan": ("bad.json", with_scores("token", [float("nan"), 0, 0]), "NaN is not allowed"),
    "huge-score": ("bad.json", with_scores("token", [1e308, 0, 0]), "outside the score range"),
    "overflowing-sums": ("bad.json", with_scores("token", [-1e300, -1e300, -1e300]), "outside the score range"),
    "arc-shape": ("bad.json", with_scores("arc", [[0, 1], [1, 0]]), "scores.token: expected shape (1,) for n = 1 "
                                                                      "(scores.arc is 2 x 2)"),
    "npy-named-npz": ("bad.npz", (lambda b: (np.save(b, np.zeros(3)), b.getvalue())[1])(io.BytesIO()),
                      "not an NPZ archive"),
    "truncated-zip": ("bad.npz", npz(arc_0=np.zeros((4, 4)))[:60], "not a readable NPZ archive"),
    "48-gib-member": ("bad.npz", npz_declaring((80_000, 80_000)), "declares shape (80000, 80000) (47.7 GiB)"),
    "boolean-npz": ("bad.npz", npz(arc_0=np.zeros((2, 2), bool), meta=np.array("[]")), "arc_0: expected an array "
                                                                                       "of real numbers, got bool"),
    "complex-npz": ("bad.npz", npz(arc_0=np.zeros((2, 2), complex), meta=np.array("[]")), "got complex128"),
    "empty-file": ("empty.jsonl", b"", "no instances in the file"),
    "json-array": ("bad.json", b"[1, 2]", "instance: expected a JSON object"),
    "duplicate-key": ("bad.json", json.dumps(GOOD)[:-1].encode() + b', "id": "again"}', "key 'id' appears twice"),
    "misspelt-score-field": ("bad.json", with_scores("sibbling", []), "scores.sibbling: unknown score field"),
    "null-token": ("bad.json", json.dumps({**GOOD, "tokens": ["a", None, "c"]}).encode(), "tokens[1]: expected a "
                                                                                            "string, got None"),
    "ragged-arc": ("bad.json", with_scores("arc", [[None, 1, 2, 3], [None, None, 1], [None, 1, None, 1],
                                                   [None, 1, 1, None]]), "scores.arc: not an array of numbers"),
    "plus-infinity-literal": ("bad.json", json.dumps(GOOD).replace('"token": [', '"token": [Infinity, ', 1).encode(),
                              "Infinity is not allowed"),
    "1e400-overflows-to-inf": ("bad.json", with_scores("token", [1e400, 0, 0]).replace(b"Infinity", b"1e400"),
                               "scores.token: +inf at index (0,)"),
    "fractional-length": ("bad.json", json.dumps({**GOOD, "length": 2.0}).encode(), "length: expected an integer"),
    "inverted-range": ("bad.json", json.dumps({**GOOD, "length": {"min": 3, "max": 1}}).encode(), "min 3 > max 1"),
    "length-beyond-n": ("bad.json", json.dumps({**GOOD, "length": 7}).encode(), "length: 7 is outside 0..3"),
    "single-root-as-string": ("bad.json", json.dumps({**GOOD, "single_root": "yes"}).encode(),
                              "single_root: expected true or false"),
    "numeric-id": ("bad.json", json.dumps({**GOOD, "id": 5}).encode(), "id: expected a string, got 5"),
    "foreign-format": ("bad.json", json.dumps({**GOOD, "format": "other/2"}).encode(), "format: expected"),
    "sibling-not-entries": ("bad.json", with_scores("sibling", [[[0]]]), "scores.sibling[0]: expected [h, s, k, "
                                                                          "score]"),
    "utf16": ("bad.json", json.dumps(GOOD).encode("utf-16"), "not UTF-8 text"),
    "gzip-named-jsonl": ("bad.jsonl", __import__("gzip").compress(json.dumps(GOOD).encode()), "line 1: not UTF-8"),
    "two-records-on-one-line": ("bad.jsonl", json.dumps(GOOD).encode() * 2, "line 1: malformed JSON (Extra data"),
    "garbage-after-a-good-line": ("bad.jsonl", json.dumps(GOOD).encode() + b"\n}{\n", "line 2: malformed JSON"),
    "unknown-extension": ("bad.txt", json.dumps(GOOD).encode(), "unknown file type"),
    "pickled-object-npz": ("bad.npz", npz(arc_0=np.array([object()], dtype=object)), "got object"),
    "npz-without-meta": ("bad.npz", npz(arc_0=np.zeros((4, 4))), "not a compbench NPZ file"),
}

# Valid edge cases: read and solved (exit 0), not refused.
EDGE_CASES = {
    "byte-order-mark": ("ok.json", b"\xef\xbb\xbf" + json.dumps(GOOD).encode()),
    "empty-sentence": ("ok.json", json.dumps({**GOOD, "tokens": [], "length": 0, "scores": {
        "token": [], "arc": [[None]], "bigram": [[None, 0.0], [None, None]]}}).encode()),
    "forbidden-token": ("ok.json", with_scores("token", [-1e400, 0, 0]).replace(b"-Infinity", b"-1e400")),
    "subnormal-and-negative-zero": ("ok.json", with_scores("token", [5e-324, -0.0, 0])),
    "blank-lines-in-jsonl": ("ok.jsonl", json.dumps(GOOD).encode() + b"\n\n  \n" + json.dumps(GOOD).encode()),
    "no-tokens": ("ok.json", json.dumps({k: v for k, v in GOOD.items() if k != "tokens"}).encode()),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    file_name, content, fragment = HOSTILE[name]
    path = tmp_path / file_name
    path.write_bytes(content)
    if name != "empty-file":  # an empty file reads as no instances; the commands refuse it
        with pytest.raises(InstanceError) as raised:
            list(compbench.read_instances(path))
        assert str(path) in str(raised.value) and fragment in str(raised.value), str(raised.value)
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(path)], capture_output=True, text=True,
                            env=ENV, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"compbench: error: {path}") and fragment in lines[0], lines


def test_empty_file_is_refused_by_check_too(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    result = subprocess.run([sys.executable, "-m", "compbench", "check", str(path), "--solvers", "hook-dp"],
                            capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 2 and result.stderr.strip() == f"compbench: error: {path}: no instances in the file"


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_valid_edge_case_is_solved(name: str, tmp_path: Path) -> None:
    file_name, content = EDGE_CASES[name]
    path = tmp_path / file_name
    path.write_bytes(content)
    assert list(compbench.read_instances(path))
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(path), "--json"], capture_output=True,
                            text=True, env=ENV, timeout=120)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert all(json.loads(line)["status"] == "optimal" for line in result.stdout.splitlines())
