"""How many drnn sine-filter runs a device trains per hour when W of them step as one batch of
networks, against the same runs one after another on torch's fused LSTM.

The drnn paper plan is 3,960 sine-filter runs of one LSTM layer (100 units, 1 input, a linear
read-out, T = 50 steps plus the delay, batches of 100, Adam, gradient clipping at norm 1): small
networks whose step on a GPU is bound by kernel launches and the host, not by the chip. This
benchmark measures the training step of W such networks held as stacked weights (W, …) and
stepped together by batched matrix products (``torch.baddbmm``): one forward, one backward and
one optimiser step for the whole width, each member clipped by its own gradient norm. It times,
for each width, the step three ways:

* ``eager``: the step as plain PyTorch operations (a few kernels per time step);
* ``compiled``: the forward and loss under ``torch.compile`` (fused element-wise kernels);
* ``graph``: the whole step (forward, backward, clipping, Adam) captured once in a CUDA graph
  and replayed (one launch per step; CUDA only);

against ``alone``: one run's step on ``torch.nn.LSTM`` (cuDNN on a GPU, oneDNN on a CPU), the
project's path for a run alone. It prints, per width and way, the milliseconds per step, the
member-steps per second and the ratio of runs per hour against runs alone one after another
(above 1: the batch of networks pays), and checks first that a member of the wide step computes
what ``torch.nn.LSTM`` with its weights computes (loss and gradients).

    python benchmarks/bench_wide_pack.py [--device cuda] [--widths 1 16 64 256 1024] [--steps 50]
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import torch
from torch import Tensor, nn


class WideLSTM(nn.Module):
    """W independent one-layer LSTMs (input ``inputs``, ``hidden`` units) with a linear read-out to
    one value per step, their weights stacked along a first dimension of size W:

        i, f, g, o = split(x_t W_ih + h_{t−1} W_hh + b),  c_t = σ(f) c_{t−1} + σ(i) tanh(g),
        h_t = σ(o) tanh(c_t),  y_t = h_t w_out + b_out,

    as ``torch.nn.LSTM`` (gate order i, f, g, o) and ``nn.Linear``, one matrix product per step
    for the whole width (``baddbmm`` over the member dimension)."""

    def __init__(self, width: int, inputs: int, hidden: int, generator: torch.Generator | None = None):
        super().__init__()
        bound = 1 / math.sqrt(hidden)

        def uniform(*shape):
            return nn.Parameter((torch.rand(*shape, generator=generator) * 2 - 1) * bound)

        self.w_ih, self.w_hh = uniform(width, inputs, 4 * hidden), uniform(width, hidden, 4 * hidden)
        self.bias = uniform(width, 1, 4 * hidden)
        self.w_out, self.b_out = uniform(width, hidden, 1), uniform(width, 1, 1)

    def forward(self, x: Tensor) -> Tensor:
        """x (T, W, B, inputs) → y (T, W, B)."""
        steps, width, batch, _ = x.shape
        hidden = self.w_hh.shape[1]
        h = x.new_zeros(width, batch, hidden)
        c = torch.zeros_like(h)
        projected = torch.matmul(x, self.w_ih) + self.bias  # (T, W, B, 4H): every step's input part at once
        outputs = []
        for t in range(steps):
            gates = torch.baddbmm(projected[t], h, self.w_hh)
            i, f, g, o = gates.chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        states = torch.stack(outputs)  # (T, W, B, H)
        return (torch.matmul(states, self.w_out) + self.b_out).squeeze(-1)


def wide_loss(model: WideLSTM, x: Tensor, y: Tensor) -> Tensor:
    """The sum over members of each member's mean squared error (so each member's gradient is its own run's)."""
    return ((model(x) - y) ** 2).mean(dim=(0, 2)).sum()


def clip_members(parameters: list[Tensor], max_norm: float) -> None:
    """Each member's gradients scaled to norm at most ``max_norm`` (``clip_grad_norm_`` per run)."""
    squares = sum(p.grad.pow(2).flatten(1).sum(1) for p in parameters)  # (W,)
    scale = (max_norm / (squares.sqrt() + 1e-6)).clamp(max=1.0)
    for p in parameters:
        p.grad.mul_(scale.view(-1, *([1] * (p.dim() - 1))))


def check_against_nn_lstm(hidden: int = 8, steps: int = 5, batch: int = 3) -> float:
    """The largest relative difference, loss and gradients, between member 1 of a wide step and
    ``nn.LSTM`` + ``nn.Linear`` with that member's weights on its data (float64, CPU)."""
    torch.manual_seed(0)
    model = WideLSTM(3, 1, hidden).double()
    x, y = torch.rand(steps, 3, batch, 1, dtype=torch.float64), torch.rand(steps, 3, batch, dtype=torch.float64)
    wide_loss(model, x, y).backward()
    lstm, out = nn.LSTM(1, hidden).double(), nn.Linear(hidden, 1).double()
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(model.w_ih[1].t()), lstm.weight_hh_l0.copy_(model.w_hh[1].t())
        lstm.bias_ih_l0.copy_(model.bias[1, 0]), lstm.bias_hh_l0.zero_()
        out.weight.copy_(model.w_out[1].t()), out.bias.copy_(model.b_out[1, 0])
    loss = ((out(lstm(x[:, 1])[0]).squeeze(-1) - y[:, 1]) ** 2).mean()
    loss.backward()
    pairs = [(model.w_ih.grad[1], lstm.weight_ih_l0.grad.t()), (model.w_hh.grad[1], lstm.weight_hh_l0.grad.t()),
             (model.bias.grad[1, 0], lstm.bias_ih_l0.grad), (model.w_out.grad[1], out.weight.grad.t())]
    member = ((model(x)[:, 1] - y[:, 1]) ** 2).mean()
    worst = abs(float((member - loss).detach())) / abs(float(loss.detach()))
    for a, b in pairs:
        worst = max(worst, float((a - b).abs().max() / b.abs().max()))
    return worst


class Case:
    """One width's training step, built for ``way`` (eager, compiled or graph) on ``device``."""

    def __init__(self, width: int, way: str, device: torch.device, hidden: int, steps: int, batch: int):
        generator = torch.Generator().manual_seed(width)
        self.model = WideLSTM(width, 1, hidden, generator).to(device)
        self.params = list(self.model.parameters())
        self.x = torch.rand(steps, width, batch, 1, device=device)
        self.y = torch.rand(steps, width, batch, device=device)
        fused = device.type == "cuda"
        self.optimizer = torch.optim.Adam(self.params, lr=1e-3, fused=fused, capturable=way == "graph")
        loss = torch.compile(wide_loss) if way == "compiled" else wide_loss
        self.loss = loss

        def step():
            self.optimizer.zero_grad(set_to_none=False)
            self.loss(self.model, self.x, self.y).backward()
            clip_members(self.params, 1.0)
            self.optimizer.step()

        self.step = step
        if way == "graph":
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):  # warm-up on a side stream, as capture asks
                    step()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
            self.step = graph.replay


class Alone:
    """One run's training step on ``torch.nn.LSTM`` (cuDNN / oneDNN): the path of a run alone."""

    def __init__(self, device: torch.device, hidden: int, steps: int, batch: int):
        self.lstm, self.out = nn.LSTM(1, hidden).to(device), nn.Linear(hidden, 1).to(device)
        self.params = [*self.lstm.parameters(), *self.out.parameters()]
        self.optimizer = torch.optim.Adam(self.params, lr=1e-3, fused=device.type == "cuda")
        self.x, self.y = torch.rand(steps, batch, 1, device=device), torch.rand(steps, batch, device=device)

    def step(self):
        self.optimizer.zero_grad()
        ((self.out(self.lstm(self.x)[0]).squeeze(-1) - self.y) ** 2).mean().backward()
        nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()


def seconds_per_step(step, device: torch.device, count: int, rounds: int = 3) -> float:
    """The median over ``rounds`` of the mean seconds of ``count`` steps, after a warm-up."""
    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(3):
        step()
    sync()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(count):
            step()
        sync()
        times.append((time.perf_counter() - start) / count)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--widths", type=int, nargs="+", default=[1, 16, 64, 256, 1024])
    parser.add_argument("--ways", nargs="+", default=["eager", "compiled", "graph"])
    parser.add_argument("--steps", type=int, default=20, help="training steps timed per round")
    parser.add_argument("--hidden", type=int, default=100)
    parser.add_argument("--T", type=int, default=60, help="time steps (the paper's 50 plus a delay of 10)")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--compile-widths", type=int, nargs="*", default=None,
                        help="the widths the compiled way is timed at (default: all; compiling takes a while)")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: nothing to time on cuda")
        return
    device = torch.device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"member of the wide step against nn.LSTM (float64): largest relative difference "
          f"{check_against_nn_lstm():.1e}")
    alone = seconds_per_step(Alone(device, args.hidden, args.T, args.batch).step, device, args.steps)
    print(f"device {device} ({torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'}), "
          f"torch {torch.__version__}; sine filter LSTM of {args.hidden} units, T = {args.T}, batch {args.batch}")
    print(f"a run alone (nn.LSTM): {1000 * alone:.2f} ms per step\n")
    print("| width | way | ms per step | member-steps per s | runs per hour against alone |\n|---:|---|---:|---:|---:|")
    for width in args.widths:
        for way in args.ways:
            if way == "graph" and device.type != "cuda" or \
                    way == "compiled" and args.compile_widths is not None and width not in args.compile_widths:
                continue
            try:
                case = Case(width, way, device, args.hidden, args.T, args.batch)
                seconds = seconds_per_step(case.step, device, args.steps)
            except torch.cuda.OutOfMemoryError:
                print(f"| {width} | {way} | out of memory | | |")
                torch.cuda.empty_cache()
                continue
            print(f"| {width} | {way} | {1000 * seconds:.2f} | {width / seconds:,.0f} | "
                  f"{width * alone / seconds:.1f} |", flush=True)
            del case
            if device.type == "cuda":
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
