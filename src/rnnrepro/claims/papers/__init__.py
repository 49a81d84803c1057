"""The claim checks that need code, one module per study (``basics``, ``drnn``, ``elstm``,
``pru``, ``wsum``): each class registers itself in :data:`~rnnrepro.claims.kinds.base.PAPER_CHECKS`
as ``<study>:<Class>``, the name a study's YAML gives it (``{kind: python, function:
drnn:ReversalBound}``). :mod:`rnnrepro.claims` imports every module of this folder, so a new
file needs no other edit. The studies' figures are in :mod:`rnnrepro.report.papers`.
"""
