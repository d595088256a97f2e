"""A dependency parser of our own (first order, second order as an option): CoNLL-U, McDonald et al.'s arc features,
decoding on the project's chart (Eisner's algorithm = the compressive chart with no deletion), trained by averaged
MIRA (passive-aggressive), the averaged perceptron or the tree-CRF.

>>> from compbench.parser import ParserModel, parse_conllu
>>> ParserModel().parse(["a", "b"], ["DT", "NN"]).tolist()
[-1, 0, 1]
"""

from .conllu import TreeSentence, format_conllu, parse_conllu, read_conllu
from .model import ParserModel, decode, parse_problem

__all__ = ["ParserModel", "TreeSentence", "decode", "format_conllu", "parse_conllu", "parse_problem", "read_conllu"]
