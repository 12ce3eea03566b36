"""Trust in one prediction: a calibrated ``confidence``, an ``in_domain`` flag, and top-k alternatives.

A prediction record (the ``gnnca predict --json`` object) carries the network's own numbers: the role head's
probability of each role written, the score of the hypothesis written, the extent posterior. None of them is the
chance that the whole line is right. This package turns them into one, one job per module:

* :mod:`.features`: the numbers read off a record, each a function registered under its name;
* :mod:`.linear`: the logistic model stored as plain numbers;
* :mod:`.candidates`: the distinct balanced lines of a record's beam;
* :mod:`.calibrators`: the calibration kinds by name (Type 1, Type 2, limiting, second opinion) in one registry,
  and one model per kind plus the alternatives' model;
* :mod:`.domain` and :mod:`.outcomes`: the in-domain index of the training reactions;
* :mod:`.sidecar` and :mod:`.binding`: the files beside a checkpoint and their sha256 binding;
* :mod:`.annotate`: :class:`~.annotate.Trust`, which writes the trust fields into records;
* :mod:`.fit`: fitting both on validation lines.

Trust reads prediction records; it sits above chem, algebra and data and below inference, which calls it as a
stage after decoding.
"""
