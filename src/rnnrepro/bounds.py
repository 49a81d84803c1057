"""Closed forms the papers give for their synthetic tasks, without torch, so that judging and
reports can read them without importing the tasks (which import torch).

* :func:`reversal_bound` — the reversal task's expected accuracy of a network that sees d inputs
  ahead (Sec. 4.1 of the delayed-RNN paper); :mod:`rnnrepro.tasks.reversal` re-exports it as
  ``analytic_bound``.
* :func:`copying_baseline` — the copying task's memoryless baseline (the PRU paper, Sec. 4.1);
  :mod:`rnnrepro.tasks.copying` re-exports it as ``memoryless_baseline``.
"""
from __future__ import annotations

import math

COPIED = 10  # categories the copying task memorises and reproduces
DATA_CATEGORIES = 8  # C_0..C_7


def reversal_bound(d: int, T: int = 20, V: int = 4) -> float:
    """The paper's expected accuracy (TPR) of a network that sees d inputs ahead (Sec. 4.1):

        min(1, ½ (1 + 1/V) + ⌊(d + 1)/2⌋ · (1/T) · (1 − 1/V))

    (the floor brackets are lost in the text extraction). A causal network (d = 0) "can output
    the second half of the elements correctly and guess those in the first half with probability
    1/V"; every two steps of delay make one more position known. For even T and d ≤ T it equals
    :func:`rnnrepro.tasks.reversal.exact_bound`, the count of known positions; it reaches 1 at
    d = T − 1.
    """
    return min(1.0, 0.5 * (1 + 1 / V) + ((d + 1) // 2) / T * (1 - 1 / V))


def copying_baseline(T: int) -> float:
    """The cross-entropy per step of the memoryless strategy: 10 log 8 / (T + 20) (nats)."""
    return COPIED * math.log(DATA_CATEGORIES) / (T + 2 * COPIED)
