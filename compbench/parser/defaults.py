"""The parser's defaults that ``compbench parser train --help`` shows, here without numpy: building the command
line's parsers imports nothing heavy."""

FEATURES = 2  # the feature set of new models; 1: that of models from before the coarse in-between tags
LEARNING_RATE = 0.1  # the tree-CRF's default AdaGrad step
L2 = 0.01  # the tree-CRF's default l2; EWT dev UAS 82.97 against 82.44 with none (both with averaged weights)
