"""The docs say what the reports and the code say.

Notation in README.md and docs/*.md (an HTML comment right after what it vouches for; invisible when rendered):

- a measured figure names its source file under ``reports/``:
  ``**0.790**<!-- reports/accuracy/x.json systems."joint (resource-dp)".f1 -->`` for JSON (a dotted key path; quote a
  key holding dots or spaces, a number indexes a list): the value, rounded to the quoted figure's decimals, must
  equal it; ``84.83<!-- reports/parser/README.md "LABEL" -->`` for a text file: the figure must occur, as a whole
  number, in a line of that file that contains LABEL;
- a table or fenced block copied from a report is preceded by ``<!-- block: reports/FILE -->``: each of its lines
  must be a line of that file;
- an option's default names the option: ``(default 8<!-- compbench train --epochs -->)``: the value right before the
  comment must equal the argparse default of that option (or, for options resolved after parsing, the constant
  the code uses).  Every ``default <number>`` the docs write must carry such a comment.

The help texts themselves: wherever a help string states a default, it must be the option's real default.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from compbench.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FIGURE = re.compile(r"(?P<figure>[+-]?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?(?: ± \d+(?:\.\d+)?)?)(?:\*\*)?"
                    r"<!-- (?P<source>reports/\S+)"
                    r"(?: (?P<rest>[^>]*?))? -->")
BLOCK = re.compile(r"<!-- block: (?P<source>reports/\S+) -->\n(?P<body>(?:```[^\n]*\n.*?\n```|(?:\|[^\n]*\n?)+))",
                   re.S)
DEFAULT = re.compile(r"(?P<value>`[^`]+`|[\w.:+-]+)(?:\*\*)?<!-- (?P<command>compbench(?: [a-z][\w-]*)+) "
                     r"(?P<option>--[\w-]+) -->")
UNMARKED_DEFAULT = re.compile(r"\bdefault:? `?\d[\w.:-]*+`?+(?!<!--)")

# options whose argparse default is None and whose real default the command applies after parsing
RESOLVED_LATER = {
    ("compbench parser train", "--cost"): ("compbench.cli.parser", "COST"),
    ("compbench parser train", "--max-step"): ("compbench.cli.parser", "MAX_STEP"),
    ("compbench parser train", "--learning-rate"): ("compbench.parser.train", "LEARNING_RATE"),
    ("compbench parser train", "--l2"): ("compbench.parser.train", "L2"),
    ("compbench demo", "--sizes"): ("compbench.cli.harness", "DEMO_SIZES"),
    ("compbench demo", "--per-size"): ("compbench.cli.harness", "DEMO_PER_SIZE"),
    ("compbench demo", "--check-set"): ("compbench.cli.harness", "DEMO_CHECK_SET"),
}


def _doc_params(pattern: re.Pattern[str]) -> list[Any]:
    return [pytest.param(doc, m, id=f"{doc.relative_to(ROOT)}:{doc.read_text()[:m.start()].count(chr(10)) + 1}")
            for doc in DOCS for m in pattern.finditer(doc.read_text())]


def _subcommands(parser: argparse.ArgumentParser, path: str = "compbench") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, f"{path} {name}")


COMMANDS = dict(_subcommands(build_parser()))


def _action(command: str, option: str) -> argparse.Action:
    assert command in COMMANDS, f"no command {command!r}"
    for action in COMMANDS[command]._actions:
        if option in action.option_strings:
            return action
    raise AssertionError(f"{command} has no option {option}")


def _real_default(command: str, option: str) -> Any:
    if (command, option) in RESOLVED_LATER:
        module, name = RESOLVED_LATER[command, option]
        return getattr(__import__(module, fromlist=[name]), name)
    return _action(command, option).default


def _same(stated: str, actual: Any) -> bool:
    stated = stated.strip("`").rstrip(".,;:")
    if isinstance(actual, (int, float)) and not isinstance(actual, bool):
        try:
            return math.isclose(float(stated), float(actual), rel_tol=1e-12)
        except ValueError:
            return False
    return stated.lower() == str(actual).lower()


def _decimals(figure: str) -> int:
    mantissa = figure.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def _json_value(data: Any, path: str) -> Any:
    for quoted, plain in re.findall(r'"([^"]*)"|([^.]+)', path):
        key = quoted or plain
        data = data[int(key)] if isinstance(data, list) else data[key]
    return data


def _occurs(figure: str, line: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(figure)}(?![\d]|\.\d)", line) is not None


# ---------------------------------------------------------------------------------------------------------------
# figures


@pytest.mark.parametrize("doc, match", _doc_params(FIGURE))
def test_a_quoted_figure_agrees_with_its_source(doc: Path, match: re.Match[str]) -> None:
    figure, source, rest = match["figure"], ROOT / match["source"], (match["rest"] or "").strip()
    assert source.is_file(), f"{match['source']} does not exist"
    if source.suffix == ".json":
        assert rest, f"{figure}: a JSON source needs a key path"
        value = _json_value(json.loads(source.read_text()), rest)
        quoted = float(figure.replace(",", ""))
        assert round(float(value), _decimals(figure)) == pytest.approx(quoted, abs=1e-12), (
            f"{doc.name} quotes {figure}; {match['source']} {rest} is {value}")
    else:
        label = shlex.split(rest)[0] if rest else ""
        assert label, f"{figure}: a text source needs a \"label\" naming its line"
        lines = [line for line in source.read_text().splitlines() if label in line]
        assert lines, f"no line of {match['source']} contains {label!r}"
        assert any(_occurs(figure, line) for line in lines), (
            f"{doc.name} quotes {figure}; no line of {match['source']} with {label!r} holds it")


@pytest.mark.parametrize("doc, match", _doc_params(BLOCK))
def test_a_copied_block_is_in_its_source(doc: Path, match: re.Match[str]) -> None:
    source = ROOT / match["source"]
    assert source.is_file(), f"{match['source']} does not exist"
    lines = {line.rstrip() for line in source.read_text().splitlines()}
    body = [line.rstrip() for line in match["body"].splitlines() if line.strip() and not line.startswith("```")]
    assert body
    missing = [line for line in body if line not in lines]
    assert not missing, f"{doc.name}: not in {match['source']}: {missing[:3]}"


def test_every_report_the_docs_cite_exists() -> None:
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" not in target:
                assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)} links to missing {target}"


def test_the_docs_links_to_anchors_resolve() -> None:
    def anchors(path: Path) -> set[str]:
        heads = re.findall(r"^#+ (.*)$", path.read_text(), flags=re.M)
        return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}

    for doc in [*DOCS, ROOT / "reports" / "parser" / "README.md"]:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)]+)\)", doc.read_text()):
            path = doc.parent / target if target else doc
            if path.suffix == ".md":
                assert anchor in anchors(path), f"{doc.relative_to(ROOT)}: no #{anchor} in {target or doc.name}"


# ---------------------------------------------------------------------------------------------------------------
# defaults


@pytest.mark.parametrize("doc, match", _doc_params(DEFAULT))
def test_a_default_the_docs_state_is_the_codes(doc: Path, match: re.Match[str]) -> None:
    actual = _real_default(match["command"], match["option"])
    assert _same(match["value"], actual), (
        f"{doc.name} says {match['command']} {match['option']} defaults to {match['value']}; the code: {actual!r}")


def test_every_default_the_docs_state_names_its_option() -> None:
    for doc in DOCS:
        text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
        unmarked = UNMARKED_DEFAULT.findall(text)
        assert not unmarked, f"{doc.relative_to(ROOT)}: defaults without <!-- compbench CMD --option -->: {unmarked}"


def _help_defaults() -> Iterator[Any]:
    for command, parser in COMMANDS.items():
        for action in parser._actions:
            if not action.help or action.help is argparse.SUPPRESS or not action.option_strings:
                continue
            text = parser._get_formatter()._expand_help(action)
            # "(default 8)", "default: 0.5", "default 1;" and "joint (default)" / "1-best MIRA, default"
            stated = [m.group(1) for m in re.finditer(r"\bdefault:? ([^\s;,)]+)", text)]
            stated += [m.group(1) for m in re.finditer(r"([\w.-]+)(?: \(|, )default\)", text)]
            for value in stated:
                yield pytest.param(command, action, value, text, id=f"{command} {action.option_strings[-1]} {value}")


@pytest.mark.parametrize("command, action, value, text", list(_help_defaults()))
def test_a_help_text_states_the_real_default(command: str, action: argparse.Action, value: str, text: str) -> None:
    actual = _real_default(command, action.option_strings[-1])
    if actual is None or isinstance(actual, bool):
        assert not re.fullmatch(r"[\d.e+-]+", value), f"{command} {action.option_strings}: {text!r} but no default"
        return  # a described default ("every registered one", "physical memory divided by --jobs")
    assert _same(value, actual), f"{command} {action.option_strings[-1]}: help says {value!r}, the default is {actual!r}"


def test_the_help_texts_state_some_defaults() -> None:  # the walk reaches the nested parser commands
    commands = {p.values[0] for p in _help_defaults()}
    assert {"compbench train", "compbench parser train", "compbench bench", "compbench solve"} <= commands


# ---------------------------------------------------------------------------------------------------------------
# commands


def _doc_commands() -> Iterator[Any]:
    for doc in DOCS:
        for block in re.findall(r"```(?:bash|sh)\n(.*?)```", doc.read_text(), flags=re.S):
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                line = line.split("#")[0].strip().removeprefix(".venv/bin/")
                if line.startswith("compbench "):
                    yield pytest.param(line, id=f"{doc.name}: {line[:60]}")


@pytest.mark.parametrize("line", list(_doc_commands()))
def test_a_command_in_the_docs_has_those_options(line: str) -> None:
    words = line.split()
    command = "compbench"
    for word in words[1:]:
        if f"{command} {word}" in COMMANDS:
            command = f"{command} {word}"
        else:
            break
    assert command != "compbench", f"no such command: {line}"
    known = {o for a in COMMANDS[command]._actions for o in a.option_strings}
    for word in words:
        option = word.strip("[]").split("=")[0].rstrip("|")
        if option.startswith("--"):
            assert option in known, f"{command} has no option {option}: {line}"


# ---------------------------------------------------------------------------------------------------------------
# the README's examples


README_PYTHON = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


@pytest.mark.parametrize("block", README_PYTHON, ids=[f"python block {i + 1}" for i in range(len(README_PYTHON))])
def test_a_python_example_of_the_readme_runs_as_written(block: str) -> None:
    """Each block runs as a script from the repository root (``-c``: the root's compbench is the one imported),
    with an instance file as its one argument (what the exec example reads)."""
    result = subprocess.run([sys.executable, "-c", block, "instances/ex1.json"], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, f"the README example fails:\n{block}\n{result.stderr[-2000:]}"


def test_the_readme_has_its_python_examples() -> None:  # the extraction finds them: the API, the plug-in, exec
    assert len(README_PYTHON) >= 3 and any("compbench.evaluate" in block for block in README_PYTHON)


def _readme_command_lines() -> list[str]:
    """Every ``compbench`` command of README.md: the lines of its shell blocks and its inline code spans."""
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            lines += [part.strip() for part in line.split("#")[0].split("&&")]
    lines += [span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))]
    return [re.sub(r"^(\.venv/bin/)?compbench ", "compbench ", line) for line in lines
            if re.match(r"(\.venv/bin/)?compbench ", line)]


def test_no_readme_command_writes_under_reports() -> None:
    """What a newcomer runs from the README leaves the committed measurements alone: an output option (given, or
    its default) under reports/ only in the documented regeneration ``compbench demo --out reports``."""
    lines = _readme_command_lines()
    assert any(line.startswith("compbench plot") for line in lines) and "compbench demo --out reports" in lines
    for line in lines:
        command, _, redirect = line.partition(">")
        words = shlex.split(command)
        name = "compbench"
        while len(words) > name.count(" ") + 1 and f"{name} {words[name.count(' ') + 1]}" in COMMANDS:
            name = f"{name} {words[name.count(' ') + 1]}"
        outputs = shlex.split(redirect)
        for option in ("--out", "--repro-dir", "--json-out"):
            given = [b for a, b in zip(words, words[1:]) if a == option]
            given += [w.partition("=")[2] for w in words if w.startswith(option + "=")]
            default = next((a.default for a in COMMANDS[name]._actions if option in a.option_strings), None)
            outputs += given or ([str(default)] if default is not None else [])
        if line != "compbench demo --out reports":
            under = [out for out in outputs if Path(out).parts[:1] == ("reports",)]
            assert not under, f"README.md: {line!r} writes under {under}"


# ---------------------------------------------------------------------------------------------------------------
# the ILP models' names


def test_the_row_and_column_names_the_docs_quote_are_the_models() -> None:
    """``one_head(3)``, ``box(0,3)``, ``z(3)``...: every such name the docs quote is a row or column of a model built
    for a small problem (the joint model with either flow, the dp model)."""
    import compbench
    from compbench_solvers.ilp.formulations import FORMULATIONS

    problem = compbench.generate("gaussian", n=5, seed=0, length=2, single_root=True)
    names: set[str] = set()
    for formulation, options in (("joint", {}), ("joint", {"flow": "multi"}), ("dp", {})):
        model = FORMULATIONS[formulation].build(problem, **options)
        names |= set(model.row_names) | set(model.col_names)
    quoted = {(doc.name, name) for doc in DOCS
              for name in re.findall(r"`([a-z][a-z_0-9]*\(\d+(?:,\d+)*\))`", doc.read_text())}
    assert {name for _, name in quoted} >= {"one_head(3)", "box(0,3)", "z(3)"}
    missing = sorted((doc, name) for doc, name in quoted if name not in names)
    assert not missing, f"names in the docs that no ILP model has: {missing}"
