"""Instance files: lossless round trips and one clear error for every validation rule."""

from __future__ import annotations

import json
import re
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import compbench
from compbench import InstanceError, Length, Problem
from compbench.testing import problems

FAST = settings(deadline=None, suppress_health_check=list(HealthCheck), database=None, max_examples=60)


def _same(a: Problem, b: Problem) -> None:
    for name in ("token_scores", "arc_scores", "bigram_scores", "sibling_scores"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.length, a.single_root, a.tokens, a.id, dict(a.extra)) == (b.length, b.single_root, b.tokens, b.id,
                                                                          dict(b.extra))


@FAST
@given(problems(max_n=6, second_order=None))
def test_round_trip_every_format(tmp_path_factory: pytest.TempPathFactory, p: Problem) -> None:
    p = p.replace(tokens=tuple(f"tok{k}" for k in range(p.n)), extra={"gold": [1], "pos": ["NN"] * p.n,
                                                                      "meta": {"note": "é"}})
    folder = tmp_path_factory.mktemp("rt")
    for name in ("one.json", "set.jsonl", "set.npz"):
        compbench.write_instances(folder / name, [p] if name.endswith(".json") else [p, p])
        back = list(compbench.read_instances(folder / name))
        assert len(back) == (1 if name.endswith(".json") else 2)
        for q in back:
            _same(p, q)


def test_issue_example_reads_and_ignored_entries_are_forbidden(tmp_path: Path) -> None:
    path = tmp_path / "ex1.json"
    path.write_text(json.dumps({
        "format": "compbench.instance/1", "id": "ex1", "tokens": ["Production", "was", "closed"], "length": 2,
        "single_root": False, "pos": ["NN", "VBD", "VBN"],
        "scores": {"token": [0.5, -1.0, 0.25],
                   "arc": [[5, 1.0, 0.2, 2.0], [None, 9, 0.1, 0.3], [None, 0.4, None, 0.9], [None, 1.5, 0.2, None]],
                   "bigram": [[None, 0.1, 0.2, 0.3, 0.0], [None, None, 0.5, 0.4, 0.1], [None, None, None, 0.3, 0.2],
                              [None, None, None, None, 0.6], [7, None, None, None, None]]}}))
    p = compbench.read_instance(path)
    assert p.n == 3 and p.length == Length.exact(2) and p.extra == {"pos": ["NN", "VBD", "VBN"]}
    assert p.arc_scores[0, 0] == -np.inf and p.arc_scores[1, 1] == -np.inf and p.bigram_scores[4, 0] == -np.inf
    assert p.arc_scores.flags.c_contiguous and p.arc_scores.dtype == np.float64 and not p.arc_scores.flags.writeable


def test_token_scores_may_be_omitted(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"format": "compbench.instance/1", "scores": {"arc": [[0, 1], [0, 0]],
                                                                             "bigram": [[0] * 3] * 3}}))
    p = compbench.read_instance(path)
    assert p.n == 1 and p.token_scores.tolist() == [0.0] and p.length is None


def _valid() -> dict:
    return {"format": "compbench.instance/1", "id": "bad1", "length": 1,
            "scores": {"token": [0.0, 0.0], "arc": [[0.0] * 3] * 3, "bigram": [[0.0] * 4] * 4}}


def _with(path: tuple, value) -> dict:
    data = _valid()
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


_DELETE = object()

BAD = [
    ("token shape", _with(("scores", "token"), [0.0] * 3), "scores.token: expected shape (2,)"),
    ("arc shape", _with(("scores", "arc"), [[0.0] * 3] * 2 + [[0.0] * 2]), "scores.arc"),
    ("bigram shape", _with(("scores", "bigram"), [[0.0] * 3] * 3), "scores.bigram: expected shape (4, 4)"),
    ("missing arc", _with(("scores", "arc"), _DELETE), "scores.arc: missing"),
    ("missing scores", _with(("scores",), _DELETE), "scores: missing"),
    ("text score", _with(("scores", "token"), ["a", 0.0]), "scores.token: expected a number or null at index (0,)"),
    ("length above n", _with(("length",), 3), "length: 3 is outside 0..2"),
    ("negative length", _with(("length",), -1), "length: -1 is outside 0..2"),
    ("range reversed", _with(("length",), {"min": 2, "max": 1}), "length: min 2 > max 1"),
    ("range above n", _with(("length",), {"min": 0, "max": 5}), "length.max: 5 is outside 0..2"),
    ("range keys", _with(("length",), {"lo": 0, "hi": 1}), "length: a range needs exactly the keys min and max"),
    ("float length", _with(("length",), 1.5), "length: expected an integer"),
    ("string length", _with(("length",), "1"), "length: expected an integer"),
    ("bool length", _with(("length",), True), "length: expected an integer"),
    ("float range", _with(("length",), {"min": 0.5, "max": 1}), "length.min: expected an integer"),
    ("format version", _with(("format",), "compbench.instance/2"), "format: expected 'compbench.instance/1'"),
    ("no format", _with(("format",), _DELETE), "format: expected"),
    ("single_root", _with(("single_root",), "yes"), "single_root: expected true or false"),
    ("tokens count", _with(("tokens",), ["a"]), "tokens: expected 2 strings"),
    ("id type", _with(("id",), 7), "id: expected a string"),
    ("sibling not a list", _with(("scores", "sibling"), {"0": 1}), "scores.sibling: expected a list"),
    ("sibling entry", _with(("scores", "sibling"), [[0, 0, 1]]), "scores.sibling[0]: expected [h, s, k, score]"),
    ("sibling index", _with(("scores", "sibling"), [[0, 0, 3, 1.0]]), "scores.sibling[0]: (0, 0, 3) is not"),
    ("sibling side", _with(("scores", "sibling"), [[1, 2, 2, 1.0]]), "scores.sibling[0]: (1, 2, 2) is not"),
    ("sibling twice", _with(("scores", "sibling"), [[0, 0, 1, 1.0], [0, 0, 1, 2.0]]), "appears twice"),
    ("sibling score", _with(("scores", "sibling"), [[0, 0, 1, "x"]]), "score must be a number or null"),
]


@pytest.mark.parametrize("name, data, message", BAD, ids=[b[0] for b in BAD])
def test_bad_json_names_file_id_and_field(tmp_path: Path, name: str, data: dict, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceError) as info:
        compbench.read_instance(path)
    text = str(info.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text
    if isinstance(data.get("id"), str):
        assert "id bad1" in text


@pytest.mark.parametrize("literal, message", [("NaN", "NaN is not allowed"), ("Infinity", "Infinity is not allowed")])
def test_nan_and_plus_infinity_literals_are_refused(tmp_path: Path, literal: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    good = json.dumps(_valid())
    path.write_text(good + "\n" + good.replace('"token": [0.0, 0.0]', f'"token": [0.0, {literal}]') + "\n")
    with pytest.raises(InstanceError, match=rf"bad.jsonl: line 2: malformed JSON .*{message}"):
        list(compbench.read_instances(path))


def test_minus_infinity_literal_means_forbidden(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(_valid()).replace('"token": [0.0, 0.0]', '"token": [0.0, -Infinity]'))
    assert compbench.read_instance(path).token_scores[1] == -np.inf


@pytest.mark.parametrize("bad_value, message", [(np.nan, "NaN at index (1,)"), (np.inf, "+inf at index (1,)")])
def test_nan_and_plus_infinity_in_npz_are_refused(tmp_path: Path, bad_value: float, message: str) -> None:
    p = compbench.generate("gaussian", n=3, seed=0)
    path = tmp_path / "p.npz"
    compbench.write_instance(path, p)
    with np.load(path) as archive:
        arrays = {k: archive[k] for k in archive.files}
    arrays["token_0"][1] = bad_value
    np.savez(path, **arrays)
    with pytest.raises(InstanceError, match=re.escape(f"p.npz: id {p.id}: instance 0: scores.token: {message}")):
        compbench.read_instance(path)


def test_malformed_json_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(_valid()) + "\n{not json\n")
    with pytest.raises(InstanceError, match=r"set.jsonl: line 2: malformed JSON"):
        list(compbench.read_instances(path))


def test_unknown_suffix_missing_file_and_count(tmp_path: Path) -> None:
    with pytest.raises(InstanceError, match="unknown file type"):
        list(compbench.read_instances(tmp_path / "x.txt"))
    with pytest.raises(InstanceError, match="cannot read"):
        list(compbench.read_instances(tmp_path / "missing.json"))
    compbench.write_instances(tmp_path / "two.jsonl", compbench.generate_set("gaussian", 3, 2))
    with pytest.raises(InstanceError, match="expected exactly one instance, found 2"):
        compbench.read_instance(tmp_path / "two.jsonl")


def test_generate_is_reproducible_and_makes_ties() -> None:
    a = compbench.generate("integer-ties", n=8, seed=5, index=2)
    b = compbench.generate("integer-ties", n=8, seed=5, index=2)
    np.testing.assert_array_equal(a.arc_scores, b.arc_scores)
    finite = a.arc_scores[np.isfinite(a.arc_scores)]
    assert len(np.unique(finite)) <= 5 and np.all(finite == np.round(finite))
    assert math.isinf(compbench.generate("forbidden", n=8, seed=0).arc_scores[np.isinf(
        compbench.generate("forbidden", n=8, seed=0).arc_scores)].sum())


def test_sibling_scores_sparse_in_json_dense_in_npz(tmp_path: Path) -> None:
    data = _with(("scores", "sibling"), [[0, 0, 2, 1.5], [0, 1, 2, None], [2, 2, 1, -0.5]])
    path = tmp_path / "sib.json"
    path.write_text(json.dumps(data))
    p = compbench.read_instance(path)
    assert p.second_order and p.sibling_scores.shape == (3, 3, 3)
    assert p.sibling_scores[0, 0, 2] == 1.5 and p.sibling_scores[0, 1, 2] == -np.inf
    assert p.sibling_scores[2, 2, 1] == -0.5 and p.sibling_scores[0, 0, 1] == 0.0
    assert p.sibling_scores[1, 0, 2] == -np.inf  # a triple that cannot occur
    compbench.write_instance(tmp_path / "sib.npz", p)
    with np.load(tmp_path / "sib.npz") as archive:
        assert archive["sibling_0"].shape == (3, 3, 3)
    _same(p, compbench.read_instance(tmp_path / "sib.npz"))
    assert compbench.io.problem_to_dict(p)["scores"]["sibling"] == [[0, 0, 2, 1.5], [0, 1, 2, None], [2, 2, 1, -0.5]]


@pytest.mark.parametrize("extra, why", [
    ({"m": {1: 2}}, "extra.m: the key 1 is not a string"),
    ({None: 1}, "extra: the key None is not a string"),
    ({"m": [1, (2, 3)]}, "extra.m[1]: a tuple is not a JSON value"),
    ({"m": np.int64(3)}, "extra.m: a int64 is not a JSON value"),
    ({"m": {"x": math.nan}}, "extra.m.x: nan is not a JSON number"),
    ({"m": 10 ** 20}, "extra.m: an integer of more than 18 digits"),
    ({"m": "\ud800"}, "extra.m: not valid Unicode"),
    ({"m": {"\ud800": 1}}, "extra.m: the key '\\ud800': not valid Unicode"),
    ({"lenght": 1}, "extra.lenght: read back, it would be refused as a misspelling of length"),
])
def test_extra_data_that_would_not_read_back_is_refused_before_writing(tmp_path: Path, extra: dict,
                                                                       why: str) -> None:
    """A .json file with an integer key was written unquoted (unreadable); .jsonl turned it into a string."""
    problem = compbench.generate("gaussian", 3, seed=0).replace(extra=extra)
    for suffix in (".json", ".jsonl", ".npz"):
        with pytest.raises(InstanceError, match=re.escape(why)):
            compbench.write_instance(tmp_path / f"x{suffix}", problem)
        assert not list(tmp_path.iterdir())
    fine = {"m": {"a": [1, 2.5, None, True, "t", {"b": []}]}, "score": 0.5, "lengths": [2], "token": "w"}
    for suffix in (".json", ".jsonl", ".npz"):
        compbench.write_instance(tmp_path / f"y{suffix}", problem.replace(extra=fine))
        assert compbench.read_instance(tmp_path / f"y{suffix}").extra == fine


def test_problem_metadata_fields_are_refused_by_name() -> None:
    problem = compbench.generate("gaussian", 2, seed=0)
    for field, value in (("extra", None), ("extra", ["a"]), ("tokens", "ab")):
        with pytest.raises(compbench.ProblemError, match=f"^{field}: expected"):
            problem.replace(**{field: value})


@pytest.mark.parametrize("key, field", [("lenght", "length"), ("singleroot", "single_root"), ("Length", "length"),
                                        ("Tokens", "tokens")])
def test_a_misspelt_field_is_refused_not_kept_as_extra_data(tmp_path: Path, key: str, field: str) -> None:
    """{"lenght": 1} was read as a free-length problem with extra data "lenght"."""
    record = json.loads(json.dumps(compbench.io.problem_to_dict(compbench.generate("gaussian", 3, seed=0))))
    record[key] = record.pop(field, 1)
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(record))
    with pytest.raises(InstanceError, match=re.escape(f"{key}: not a field of the format: did you mean {field}?")):
        compbench.read_instance(path)
    del record[key]
    record["idx"] = 7  # an extra key unlike the fields is kept
    path.write_text(json.dumps(record))
    assert compbench.read_instance(path).extra["idx"] == 7


def test_write_instance_with_its_arguments_swapped_says_so(tmp_path) -> None:
    """It raised 'expected str, bytes or os.PathLike object, not Problem' from deep in pathlib."""
    p = compbench.generate("gaussian", n=3, seed=0, length=2)
    with pytest.raises(TypeError, match="path: expected a file name, got Problem \\(the path comes first"):
        compbench.write_instance(p, tmp_path / "x.json")
    with pytest.raises(compbench.io.InstanceError, match="^id \\(none\\): extra.x: nan"):
        compbench.write_instance(tmp_path / "x.json", p.replace(id="", extra={"x": float("nan")}))


def test_an_archive_member_flagged_encrypted_is_one_error_naming_it(tmp_path) -> None:
    """One flipped bit (a member's 'encrypted' flag) raised zipfile's RuntimeError with a traceback."""
    path = tmp_path / "i.npz"
    compbench.write_instances(path, [compbench.generate("gaussian", n=5, seed=1, length=2)])
    raw = bytearray(path.read_bytes())
    central = raw.find(b"PK\x01\x02")  # the first member's central directory entry: its flags at offset 8
    raw[central + 8] |= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(compbench.io.InstanceError, match=f"{path}: not a readable NPZ archive .*encrypted"):
        list(compbench.read_instances(path))


def test_a_damaged_instance_archive_is_one_error_naming_it(tmp_path) -> None:
    """A flipped byte in an .npz instance file raised zlib.error or tokenize.TokenError with a traceback."""
    path = tmp_path / "i.npz"
    compbench.write_instances(path, [compbench.generate("gaussian", n=30, seed=k, length=5) for k in range(3)])
    raw = path.read_bytes()
    refused = 0
    for position in range(100, len(raw) - 100, 37):
        damaged = bytearray(raw)
        damaged[position] ^= 0xFF
        path.write_bytes(bytes(damaged))
        try:
            list(compbench.read_instances(path))
        except compbench.io.InstanceError as exc:
            assert str(path) in str(exc)
            refused += 1
    assert refused > 0


def test_json_lines_split_at_line_feeds_only(tmp_path) -> None:
    """A JSON string may hold U+2028 or U+0085 unescaped (another tool's ensure_ascii=False): str.splitlines cut
    the line there ('malformed JSON (Unterminated string ...)')."""
    problem = compbench.generate("gaussian", n=2, seed=0, length=1).replace(tokens=["a\u2028b", "c\x85d"])
    compbench.write_instance(tmp_path / "one.json", problem)
    record = json.loads((tmp_path / "one.json").read_text())
    (tmp_path / "set.jsonl").write_text(json.dumps(record, ensure_ascii=False) + "\r\n" + json.dumps(record) + "\n",
                                        encoding="utf-8")
    read = list(compbench.read_instances(tmp_path / "set.jsonl"))
    assert [p.tokens for p in read] == [("a\u2028b", "c\x85d")] * 2


def test_an_id_key_in_another_case_is_refused_as_a_misspelt_field(tmp_path) -> None:
    """'ID' was read into extra, the instance's id left empty; 'Length' and 'Scores' were refused already."""
    compbench.write_instance(tmp_path / "ex.json", compbench.generate("gaussian", n=3, seed=0, length=2))
    record = json.loads((tmp_path / "ex.json").read_text())
    record["ID"] = record.pop("id")
    (tmp_path / "upper.json").write_text(json.dumps(record))
    with pytest.raises(compbench.InstanceError, match="ID: not a field of the format: did you mean id"):
        compbench.read_instance(tmp_path / "upper.json")
