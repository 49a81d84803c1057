"""The pre-flight check: what a user learns in one short job on a GPU node before queueing the
paper plan (``python -m rnnrepro.preflight``; ``--help`` says what it runs).

- :mod:`.reproduce`: runs of every task type trained twice (identical?), one killed with SIGKILL
  and resumed (identical to the uninterrupted run?), packs against their runs alone.
- :mod:`.speed`: the cells' training steps as ratios to torch's nn.LSTM (cuDNN on a GPU), and a
  pack's speed against its runs one after another.
- :mod:`.costing`: a sample of the paper plan's configurations timed on the device, extrapolated
  to the plan.
- :mod:`.table`: the rows every check gives, printed as one table and written as one file.
"""
