"""What every task provides to models and to the training loop.

A task owns its data (loaded from a prepared file or generated from a seed), turns it into
padded time-major batches, and knows its loss and metrics. Models see only :class:`TaskIO`.

Carried state (stateful truncated BPTT). A task whose ``stateful`` is true gives batches
that continue one another: column b of batch k+1 is the continuation of column b of batch k.
The training loop then runs the model from the state batch k ended in (detached, so
gradients stop at the batch boundary), and resets it to zero at the start of every epoch.
A model that can do this has ``carries_state = True`` and accepts
``model(batch, state, return_state=True) -> (output, final state)`` (``state`` None: the
zero state); :func:`forward_with_state` is the one entry point, which explains why a model
cannot. The state is whatever the model returns (a tensor, or tuples and lists of tensors).

Direction of the dev metric. Early stopping and model selection need to know whether a
larger dev metric is better: :meth:`Task.dev_goal_of` gives ``"max"`` or ``"min"``, from the
task's ``dev_goal`` when it sets one (next to its ``dev_metric``), else from the metric's
name (:data:`~rnnrepro.metrics.directions.METRIC_GOALS`: accuracy, BLEU, UAS, LAS, F1, EM higher
is better; MSE, NLL, perplexity, loss, error lower).

Declared metrics. :meth:`Task.emitted_metrics` names every metric ``evaluate`` writes for the
dev and test splits of a task built with given parameters (``<split>_<name>`` for each name of
the task's ``split_metrics``; a task whose metrics depend on its parameters overrides it), so a
study naming a metric no run emits is an error when the workflow is parsed.

Test items. A task whose split metrics are functions of sums over items (sentences, windows,
sequences) names those functions in :meth:`Task.item_formulas` and, given an
:class:`~rnnrepro.metrics.items.ItemRecorder` (``evaluate(..., items=recorder)``), records each
item's statistics while it evaluates. The training loop keeps the test split's items in the
run's folder, so that the report can weigh a difference between two single runs by the paired
bootstrap over test items (:mod:`rnnrepro.metrics.items`).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Literal, Union

import torch
from torch import Tensor, nn

from ..metrics.directions import METRIC_GOALS, metric_goal  # noqa: F401  (METRIC_GOALS: importable from here too)
from ..metrics.items import Formula, ItemRecorder, ratio

IGNORE_INDEX = -100  # target value of padding positions in token-level tasks
EVALUATED_SPLITS = ("dev", "test")  # the splits a finished run is evaluated on (rnnrepro.train)


@dataclass(frozen=True)
class TaskIO:
    """Shapes a model must accept and produce.

    ``input_vocab``: number of token ids (inputs (T, B) long), or None for real-valued
    inputs with ``input_features`` per step (inputs (T, B, F)). ``level`` "token": one
    output of ``output_size`` per step; "sequence": one per sequence; "target_sequence":
    one per target position, the targets having their own length (translation).
    """

    output_size: int
    level: Literal["token", "sequence", "target_sequence"]
    input_vocab: int | None = None
    input_features: int | None = None


@dataclass
class Batch:
    """A padded, time-major batch: inputs (T, B[, F]), lengths (B,), targets per the task.

    ``extra`` holds what particular tasks and models need beyond that (target lengths of
    sequence-to-sequence tasks, characters of each word, ...), all tensors.
    """

    inputs: Tensor
    lengths: Tensor
    targets: Tensor
    extra: dict[str, Tensor] = field(default_factory=dict)

    def to(self, device: torch.device) -> "Batch":
        return Batch(self.inputs.to(device), self.lengths.to(device), self.targets.to(device),
                     {key: value.to(device) for key, value in self.extra.items()})

    @property
    def size(self) -> int:
        return int(self.lengths.shape[0])


@dataclass
class Predictions:
    """What a model with several objectives returns (e.g. the DBRNN's combined, forward and
    backward predictions): the training loss is the task's loss of ``main`` plus that of each
    of ``auxiliary``; metrics are computed from ``main``."""

    main: Tensor
    auxiliary: tuple[Tensor, ...] = ()


ModelOutput = Union[Tensor, Predictions]


def main_output(output: ModelOutput) -> Tensor:
    """The prediction that metrics are computed from."""
    return output.main if isinstance(output, Predictions) else output


#: A model's recurrent state carried from one batch to the next: a tensor, or tuples and
#: lists of them (e.g. ``(h, c)`` of an LSTM layer, a list of those for a stack).
CarriedState = Any


class Task:
    """Base class. Subclasses set ``io`` and implement the methods below."""

    io: TaskIO
    #: metric whose value on the dev split is logged on the training curve every epoch
    dev_metric: str
    #: "max" or "min": which way ``dev_metric`` improves; None: read from METRIC_GOALS by its name
    dev_goal: Literal["min", "max"] | None = None
    #: whether consecutive batches continue one another, the model's state being carried
    #: from each to the next (see the module docstring)
    stateful: bool = False
    #: what ``evaluate`` writes for every split, without the ``<split>_`` prefix (empty: the
    #: dev metric's name alone); see :meth:`emitted_metrics`
    split_metrics: ClassVar[tuple[str, ...]] = ()
    #: what an item of a split is ("sentence", "window", "sequence"), when the task records items
    item_unit: ClassVar[str] = "sequence"
    #: split metrics (without the prefix) as formulas over item sums; see :meth:`item_formulas`
    item_metrics: ClassVar[dict[str, Formula]] = {}
    #: whether runs of this task can train packed, as one batched model (rnnrepro.packing): every
    #: batch has the same shapes and lengths whatever the data parameters, and ``loss`` depends on
    #: none of them
    packable: ClassVar[bool] = False
    #: constructor parameters that choose only the data (which sequences, which filter), not its
    #: shapes: runs differing in these (and in the seed) can share a pack
    data_params: ClassVar[tuple[str, ...]] = ("data_seed",)

    def item_formulas(self) -> dict[str, Formula]:
        """The split metrics ``evaluate(..., items=recorder)`` can recompute from the items it
        records, each as its formula over item sums; empty when the task records no items."""
        return dict(self.item_metrics)

    @classmethod
    def emitted_metrics(cls, **params) -> set[str]:
        """The metrics ``evaluate`` writes on the dev and test splits of this task built with
        ``params`` (its constructor's keyword parameters): ``<split>_<name>`` for every name
        of :attr:`split_metrics`."""
        names = cls.split_metrics or (cls.dev_metric.removeprefix("dev_"),)
        return {f"{split}_{name}" for split in EVALUATED_SPLITS for name in names}

    @classmethod
    def with_defaults(cls, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` over the defaults of the constructor's keyword parameters."""
        defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                    if p.default is not inspect.Parameter.empty}
        return {**defaults, **params}

    @classmethod
    def dev_goal_of(cls) -> Literal["min", "max"]:
        """Which way the dev metric improves: ``"max"`` (higher is better) or ``"min"``."""
        if cls.dev_goal is not None:
            return cls.dev_goal
        try:
            return metric_goal(cls.dev_metric)
        except ValueError as error:
            raise ValueError(f"task {cls.__name__}: {error}; set dev_goal = 'min' or 'max' beside dev_metric") from None

    @classmethod
    def dataset(cls, **params) -> str | None:
        """Key of the prepared dataset this task reads (see rnnrepro.data), or None if synthetic."""
        return None

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        """The split cut into batches; shuffled by ``generator`` when given, else in a fixed order."""
        raise NotImplementedError

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Mean training loss of one prediction of a batch."""
        raise NotImplementedError

    def total_loss(self, output: ModelOutput, batch: Batch) -> Tensor:
        """The loss a model is trained on: one term per prediction it makes (see Predictions)."""
        if isinstance(output, Predictions):
            return sum((self.loss(p, batch) for p in output.auxiliary), self.loss(output.main, batch))
        return self.loss(output, batch)

    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device) -> dict[str, float]:
        """Metrics of ``model`` on ``split``, named ``<split>_<metric>``."""
        raise NotImplementedError


# -- carried state -------------------------------------------------------------------------
def state_obstacle(model: nn.Module) -> str | None:
    """Why ``model`` cannot carry a recurrent state from one batch to the next, or None if it can."""
    if getattr(model, "carries_state", False):
        return None
    reason = getattr(model, "state_obstacle", None) or (
        "it does not implement forward(batch, state, return_state=True); the basic and "
        "one-directional stacked models do")
    return f"model {type(model).__name__} cannot carry its recurrent state across batches: {reason}"


def forward_with_state(model: nn.Module, batch: Batch,
                       state: CarriedState | None) -> tuple[ModelOutput, CarriedState]:
    """The model's output on ``batch`` read from ``state`` (None: the zero state), and the
    state after each column's last real step; a TypeError says why a model cannot."""
    obstacle = state_obstacle(model)
    if obstacle is not None:
        raise TypeError(obstacle)
    return model(batch, state, return_state=True)


def detach_state(state: CarriedState | None) -> CarriedState | None:
    """The state cut from the graph that made it (truncated BPTT: gradients stop here)."""
    if state is None:
        return None
    if isinstance(state, Tensor):
        return state.detach()
    return _rebuild(state, [detach_state(part) for part in state])


def move_state(state: CarriedState | None, device: torch.device | str) -> CarriedState | None:
    """The state on ``device`` (after loading a checkpoint onto the CPU)."""
    if state is None:
        return None
    if isinstance(state, Tensor):
        return state.to(device)
    return _rebuild(state, [move_state(part, device) for part in state])


def _rebuild(container: tuple | list, parts: list) -> tuple | list:
    """A container of the same kind (list, tuple, named tuple) holding ``parts``."""
    if isinstance(container, list):
        return parts
    return type(container)(*parts) if hasattr(container, "_fields") else tuple(parts)


def shuffled_buckets(lengths: list[int], batch_size: int, generator: torch.Generator | None,
                     bucket_batches: int = 50) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length.

    Without a generator: sorted by length (for evaluation). With one: a random permutation
    cut into chunks of ``bucket_batches`` batches, each chunk sorted by length and cut into
    batches, and the batches shuffled, so padding stays small and the order is random but
    fixed by the generator's state.
    """
    n = len(lengths)
    if generator is None:
        order = sorted(range(n), key=lambda i: lengths[i])
        yield from (order[i:i + batch_size] for i in range(0, n, batch_size))
        return
    permutation = torch.randperm(n, generator=generator).tolist()
    chunk = batch_size * bucket_batches
    batches = []
    for start in range(0, n, chunk):
        part = sorted(permutation[start:start + chunk], key=lambda i: lengths[i])
        batches += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
    for index in torch.randperm(len(batches), generator=generator).tolist():
        yield batches[index]


def pad_time_major(sequences: list[list[int]], pad: int) -> Tensor:
    """(T, B) long tensor of the sequences padded with ``pad`` at the end.

    The padded rows go to torch as one nested list (one conversion for the batch, not one tensor
    per sequence: 1,300 batches of 32 sentences of 100-140 tokens, 0.65 s where that took
    1.1-1.6 s), then are transposed to time-major."""
    steps = max(len(s) for s in sequences)
    rows = [list(s) + [pad] * (steps - len(s)) for s in sequences]
    return torch.tensor(rows, dtype=torch.long).t().contiguous()


def random_order_chunks(n: int, batch_size: int, generator: torch.Generator | None) -> tuple[Tensor, ...]:
    """Indices 0..n-1 cut into batches: shuffled by ``generator``, or in order without one
    (for tasks whose sequences all have the same length)."""
    order = torch.randperm(n, generator=generator) if generator is not None else torch.arange(n)
    return order.split(batch_size)


#: item formulas of :func:`split_mse` and :func:`split_accuracy` (items: the batch columns, sequences)
MSE_ITEMS = {"mse": ratio("squared_error", "values")}
ACCURACY_ITEMS = {"accuracy": ratio("correct", "tokens")}


def per_column(values: Tensor) -> Tensor:
    """Sum per batch column: over every dimension but the batch's (dim 1 of a time-major
    (T, B, ...) tensor); a (B,) tensor (one value per sequence) as it is."""
    if values.dim() == 1:
        return values
    return values.transpose(0, 1).reshape(values.shape[1], -1).sum(1)


@torch.no_grad()
def split_mse(task: Task, model: nn.Module, split: str, batch_size: int, device: torch.device,
              items: ItemRecorder | None = None) -> dict[str, float]:
    """``<split>_mse``: squared error averaged over every predicted value of the split (items:
    each sequence's ``squared_error`` sum and its number of ``values``)."""
    total, count = 0.0, 0
    for batch in task.batches(split, batch_size):
        batch = batch.to(device)
        error = (main_output(model(batch)).squeeze(-1) - batch.targets) ** 2
        total += float(error.sum())
        count += error.numel()
        if items is not None:
            items.add(squared_error=per_column(error.double()), values=per_column(torch.ones_like(error)))
    return {f"{split}_mse": total / count}


@torch.no_grad()
def split_accuracy(task: Task, model: nn.Module, split: str, batch_size: int,
                   device: torch.device, items: ItemRecorder | None = None,
                   with_loss: bool = False) -> dict[str, float]:
    """``<split>_accuracy``: argmax predictions right over every real (not IGNORE_INDEX) target
    (items: each sequence's ``correct`` and real ``tokens``). With ``with_loss`` also
    ``<split>_loss``, the mean cross-entropy −log p(y) over the same targets."""
    correct = total = 0
    nll = 0.0
    for batch in task.batches(split, batch_size):
        batch = batch.to(device)
        scores = main_output(model(batch))
        predicted = scores.argmax(-1)
        real = batch.targets != IGNORE_INDEX
        right = (predicted == batch.targets) & real
        correct += int(right.sum())
        total += int(real.sum())
        if with_loss:
            nll += float(nn.functional.cross_entropy(scores.flatten(0, -2).float(), batch.targets.flatten(),
                                                     ignore_index=IGNORE_INDEX, reduction="sum"))
        if items is not None:
            items.add(correct=per_column(right.long()), tokens=per_column(real.long()))
    metrics = {f"{split}_accuracy": correct / total}
    if with_loss:
        metrics[f"{split}_loss"] = nll / total
    return metrics
