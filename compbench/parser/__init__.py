"""A dependency parser of our own (first order, second order as an option): CoNLL-U, McDonald et al.'s arc features,
decoding on the project's chart (Eisner's algorithm = the compressive chart with no deletion), trained by averaged
MIRA (passive-aggressive), the averaged perceptron or the tree-CRF.

>>> from compbench.parser import ParserModel, parse_conllu
>>> ParserModel().parse(["a", "b"], ["DT", "NN"]).tolist()
[-1, 0, 1]
"""

import importlib

_HOME = {"TreeSentence": "conllu", "format_conllu": "conllu", "parse_conllu": "conllu", "read_conllu": "conllu",
         "ParserModel": "model", "decode": "model", "parse_problem": "model"}


def __getattr__(name: str):
    """The names below, imported on first use (as :mod:`compbench`'s): its light submodules (``defaults``) load
    without numpy."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["ParserModel", "TreeSentence", "decode", "format_conllu", "parse_conllu", "parse_problem", "read_conllu"]
