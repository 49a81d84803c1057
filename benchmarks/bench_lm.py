"""Tokens per second of our word-level language model beside a plain torch.nn.LSTM one, measured side by side.

Both models are embedding -> one LSTM layer -> linear layer over the V words, with the
pytorch/examples word_language_model initialisation (embedding and output weights ~ U(±0.1),
output bias 0), trained by truncated BPTT with the state carried from batch to batch, SGD
and gradient-norm clipping, on the same batches. Ours is the ``basic`` model with the
``lstm`` cell (``--cell`` picks another) trained by ``rnnrepro.train.train_step``, the
training loop's own step, on the stateful ``lm`` task's batches; the plain one is
nn.Embedding + nn.LSTM + nn.Linear stepped as pytorch/examples does. Evaluation is the
forward pass alone (no gradient), the state carried.

In every round each side takes one step on the same batch, the side going first alternating
between rounds; tokens/s = B·T / step time, from the best (``--statistic min``) or median
step time of the rounds, so load from other processes affects both sides alike. The last row
is ours / plain (above 1: ours is faster).

    python benchmarks/bench_lm.py                      # the PTB small settings: V 10000, H 200, T 35, B 20
    python benchmarks/bench_lm.py --threads 1          # one thread: steadier on a busy machine
    python benchmarks/bench_lm.py --data resources/prepared/ptb_word.json.gz   # real PTB windows
    RNNREPRO_TORCHSCRIPT=0 python benchmarks/bench_lm.py    # our cells' eager loops instead of TorchScript
"""
from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

from rnnrepro.cells.compiled import scripting_enabled
from rnnrepro.data.prepared import write_json_gz
from rnnrepro.tasks.base import IGNORE_INDEX, forward_with_state
from rnnrepro.train import TrainConfig, build_run, train_step


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--vocab", type=int, default=10_000,
                        help="words V of the synthetic corpus (default 10000, PTB's); ignored with --data")
    parser.add_argument("--data", type=Path, help="a prepared ptb_word corpus (default: synthetic uniform words)")
    parser.add_argument("--hidden", type=int, default=200, help="embedding and hidden size (default 200)")
    parser.add_argument("--bptt", type=int, default=35, help="window length T (default 35)")
    parser.add_argument("--batch", type=int, default=20, help="parallel streams B (default 20)")
    parser.add_argument("--cell", default="lstm", help="our model's cell (default lstm)")
    parser.add_argument("--lr", type=float, default=20.0, help="SGD learning rate (default 20)")
    parser.add_argument("--clip", type=float, default=0.25, help="largest gradient norm (default 0.25)")
    parser.add_argument("--repeats", type=int, default=10, help="timed rounds (default 10)")
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed rounds first (default 3: TorchScript specialises its loops in the first runs)")
    parser.add_argument("--statistic", choices=("min", "median"), default="min",
                        help="summary of each side's step times (default min: the least disturbed)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


class PlainLM(nn.Module):
    """pytorch/examples word_language_model's RNNModel (LSTM, no dropout, untied)."""

    def __init__(self, input_vocab: int, output_vocab: int, size: int):
        super().__init__()
        self.embedding = nn.Embedding(input_vocab, size)
        self.lstm = nn.LSTM(size, size)
        self.decoder = nn.Linear(size, output_vocab)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, inputs, state=None):
        out, state = self.lstm(self.embedding(inputs), state)
        return self.decoder(out), state


def synthetic_corpus(folder: Path, vocab: int, tokens: int, seed: int) -> Path:
    """Uniformly drawn words (every one of the ``vocab`` words at least once) as a prepared corpus."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab - 1)] + ["<eos>"]
    stream = words + [rng.choice(words) for _ in range(max(0, tokens - vocab))]
    path = folder / "ptb_word.json.gz"
    write_json_gz({"dataset": "ptb_word", "splits": {"train": stream, "dev": stream[:tokens], "test": stream[:2]}},
                  path, compresslevel=1)
    return path


def plain_train_step(model: PlainLM, optimizer, batch, state, clip: float):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    out, state = model(batch.inputs, state)
    loss = nn.functional.cross_entropy(out.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE_INDEX)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return tuple(part.detach() for part in state)


def measure(args: argparse.Namespace, data: Path) -> dict[tuple[str, str], float]:
    """Step times (s) of (side, "train" / "eval"), side "plain" or "ours"."""
    rounds = args.warmup + args.repeats
    run = {"seed": args.seed,
           "task": {"name": "lm", "corpus": "ptb_word", "bptt": args.bptt, "stateful": True,
                    "max_train_tokens": args.batch * args.bptt * rounds + 1,
                    "max_eval_tokens": args.batch * args.bptt * rounds + 1},
           "model": {"name": "basic", "hidden_size": args.hidden, "embedding_size": args.hidden,
                     "embedding_init": 0.1, "output_init": 0.1},
           "cell": {"name": args.cell}}
    cfg = TrainConfig(batch_size=args.batch, optimizer="sgd", lr=args.lr, clip=args.clip)
    torch.manual_seed(args.seed)
    task, ours = build_run(run, data)
    plain = PlainLM(task.io.input_vocab, task.io.output_size, args.hidden)
    ours_optimizer = torch.optim.SGD(ours.parameters(), lr=args.lr)
    plain_optimizer = torch.optim.SGD(plain.parameters(), lr=args.lr)
    train_batches = task.batches("train", args.batch)
    eval_batches = task.batches("dev", args.batch)
    state = {"ours": None, "plain": None, "ours_eval": None, "plain_eval": None}

    def ours_train(batch):
        _, state["ours"] = train_step(ours, task, batch, ours_optimizer, cfg, state["ours"])

    def plain_train(batch):
        state["plain"] = plain_train_step(plain, plain_optimizer, batch, state["plain"], args.clip)

    @torch.no_grad()
    def ours_eval(batch):
        ours.eval()
        _, state["ours_eval"] = forward_with_state(ours, batch, state["ours_eval"])

    @torch.no_grad()
    def plain_eval(batch):
        plain.eval()
        _, state["plain_eval"] = plain(batch.inputs, state["plain_eval"])

    sides = {("ours", "train"): ours_train, ("plain", "train"): plain_train,
             ("ours", "eval"): ours_eval, ("plain", "eval"): plain_eval}
    times = {key: [] for key in sides}
    for index in range(min(rounds, len(train_batches), len(eval_batches))):
        for what in ("train", "eval"):
            batches = train_batches if what == "train" else eval_batches
            order = ("ours", "plain") if index % 2 == 0 else ("plain", "ours")
            for side in order:
                start = time.perf_counter()
                sides[side, what](batches[index])
                if index >= args.warmup:
                    times[side, what].append(time.perf_counter() - start)
    summary = min if args.statistic == "min" else statistics.median
    return {key: summary(values) for key, values in times.items() if values}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as folder:
        tokens = args.batch * args.bptt * (args.warmup + args.repeats) + 1
        data = args.data or synthetic_corpus(Path(folder), args.vocab, tokens, args.seed)
        step = measure(args, data)
    tokens_per_step = args.batch * args.bptt
    corpus = f"data {args.data}" if args.data else f"synthetic V {args.vocab}"
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {corpus}, H {args.hidden}, "
          f"T {args.bptt}, B {args.batch}, loops {'TorchScript' if scripting_enabled() else 'eager'}, "
          f"{args.repeats} rounds, {args.statistic} step time")
    width = 24
    print("model".ljust(width) + "train tokens/s".rjust(16) + "eval tokens/s".rjust(16))
    for side, label in (("plain", "plain nn.LSTM"), ("ours", f"ours (basic, {args.cell})")):
        print(label.ljust(width) + "".join(f"{tokens_per_step / step[side, what]:16.0f}" for what in ("train", "eval")))
    print("ours / plain".ljust(width)
          + "".join(f"{step['plain', what] / step['ours', what]:16.2f}" for what in ("train", "eval")))


if __name__ == "__main__":
    main()
