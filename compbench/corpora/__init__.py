"""Real sentences: corpus readers (one :class:`CorpusFormat` per corpus in :data:`CORPORA`), gold alignment of
compressions to tokens and the fixed splits.

>>> from compbench.corpora import CORPORA
>>> sorted(CORPORA)
['clarke-lapata-broadcast', 'clarke-lapata-written', 'google']
"""

from .readers import CORPORA, Corpus, CorpusError, CorpusFormat, Sentence, read_corpus, split_corpus

__all__ = ["CORPORA", "Corpus", "CorpusError", "CorpusFormat", "Sentence", "read_corpus", "split_corpus"]
