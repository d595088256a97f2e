"""What the parser and the compression model learn with: hashed feature templates (:mod:`.features`), the POS taggers
(:mod:`.tagger`), and averaged weights, AdaGrad and the keep-the-best-epoch loop (:mod:`.training`).

It imports nothing of the project's other packages.
"""
