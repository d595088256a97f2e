"""The compression model: hashed features of a sentence and a bigram LM turned into problem scores
(:class:`~.model.CompressionModel`), trained by the averaged perceptron or the CRF, the seeds' baselines, and
accuracy against gold compressions.  It reads sentences from :mod:`compbench.corpora` and parses with
:class:`compbench.parser.ParserModel` (the parser knows nothing of it).
"""
