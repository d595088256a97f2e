"""Real sentences: corpus readers, gold alignment, fixed splits, a learned scoring model and accuracy.

>>> from compbench.corpora import CORPORA
>>> sorted(CORPORA)
['clarke-lapata-broadcast', 'clarke-lapata-written', 'google']
"""

from .readers import CORPORA, Corpus, Sentence, read_corpus, split_corpus

__all__ = ["CORPORA", "Corpus", "Sentence", "read_corpus", "split_corpus"]
