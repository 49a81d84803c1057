"""Maximum spanning tree decoding (Chu-Liu-Edmonds, one root child) against brute force."""
from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import torch

from rnnrepro.metrics.trees import decode_batch, find_cycle, is_tree, max_spanning_tree, tree_score


@functools.cache
def all_trees(n: int) -> np.ndarray:
    """Every tree of n words with one word attached to the root, as heads (trees, n): all n^n
    head assignments without self-loops, kept when one word has head 0 and following heads from
    every word reaches 0 within n steps."""
    choices = [[h for h in range(n + 1) if h != i] for i in range(1, n + 1)]
    heads = np.array(list(itertools.product(*choices)), dtype=np.int64).reshape(-1, n)
    pointers = np.concatenate([np.zeros((len(heads), 1), dtype=np.int64), heads], axis=1)  # node 0 -> 0
    reached = np.tile(np.arange(1, n + 1), (len(heads), 1))
    for _ in range(n):
        reached = np.take_along_axis(pointers, reached, axis=1)
    trees = heads[((heads == 0).sum(axis=1) == 1) & (reached == 0).all(axis=1)]
    assert len(trees) == n ** (n - 1)  # rooted labelled trees on n nodes (Cayley), the root tied to 0
    return trees


def brute_force_best(scores: np.ndarray) -> float:
    n = scores.shape[0]
    trees = all_trees(n)
    return float(scores[np.arange(n), trees].sum(axis=1).max())


def random_scores(n: int, rng: np.random.Generator, kind: str) -> np.ndarray:
    scores = rng.normal(size=(n, n + 1)) * 3
    if kind == "root-heavy":  # the argmax attaches several words to the root
        scores[:, 0] += 4
    elif kind == "integers":  # many ties
        scores = rng.integers(-3, 4, size=(n, n + 1)).astype(float)
    elif kind == "masked":  # some impossible arcs (never all of a word's, never every root arc)
        mask = rng.random((n, n + 1)) < 0.3
        mask[:, 0] = False
        scores[mask] = -np.inf
    scores[np.arange(n), np.arange(1, n + 1)] = -np.inf  # a word is not its own head
    return scores


# sizes 1-7: all 7^6 = 117,649 trees of 7 words are enumerated (823,543 head assignments)
BRUTE_FORCE = [(1, 3), (2, 20), (3, 60), (4, 80), (5, 80), (6, 60), (7, 30)]


KINDS = ["normal", "root-heavy", "integers", "masked"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n, count", BRUTE_FORCE)
def test_the_decoder_finds_the_best_tree_of_brute_force(n, count, kind):
    rng = np.random.default_rng([n, KINDS.index(kind)])
    not_argmax = 0
    for _ in range(count):
        scores = random_scores(n, rng, kind)
        best = brute_force_best(scores)
        if best == -np.inf:  # masked arcs left no tree with one root child
            with pytest.raises(ValueError):
                max_spanning_tree(scores)
            continue
        heads = max_spanning_tree(scores)
        assert is_tree(heads.tolist()), (scores, heads)
        assert tree_score(scores, heads) == pytest.approx(best, abs=1e-9)
        not_argmax += not is_tree(scores.argmax(axis=1).tolist())
    if n >= 4 and kind != "integers":
        assert not_argmax > count // 4  # many cases are ones where the argmax is no tree


def test_a_tree_argmax_decodes_to_itself():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 20, 60):
        for _ in range(10):
            gold = rng.permutation(n) + 1  # a random tree: each word headed by an earlier one in a random order
            heads = np.zeros(n, dtype=np.int64)
            for rank, word in enumerate(gold):
                heads[word - 1] = 0 if rank == 0 else gold[rng.integers(rank)]
            assert is_tree(heads.tolist())
            scores = rng.normal(size=(n, n + 1))
            scores[np.arange(n), heads] = 10.0
            scores[np.arange(n), np.arange(1, n + 1)] = -np.inf
            assert (scores.argmax(axis=1) == heads).all()
            assert max_spanning_tree(scores).tolist() == heads.tolist()


def one_change_improves(scores: np.ndarray, heads: np.ndarray) -> bool:
    """Whether moving one word to another head gives a better tree (the best tree has no such move)."""
    best = tree_score(scores, heads)
    for i in range(len(heads)):
        for h in np.flatnonzero(scores[i] > scores[i, heads[i]] + 1e-12):
            changed = heads.copy()
            changed[i] = h
            if is_tree(changed.tolist()) and tree_score(scores, changed) > best + 1e-9:
                return True
    return False


@pytest.mark.parametrize("kind", ["normal", "root-heavy", "cyclic"])
def test_long_sentences_decode_to_trees(kind):
    rng = np.random.default_rng(len(kind))
    for trial in range(40):
        n = int(rng.integers(30, 61))
        scores = random_scores(n, rng, "root-heavy" if kind == "root-heavy" else "normal")
        if kind == "cyclic":  # strong arcs i -> i+1 -> ... in blocks: cycles everywhere in the argmax
            for start in range(1, n, 5):
                block = list(range(start, min(start + 5, n + 1)))
                for a, b in zip(block, block[1:] + block[:1]):
                    if a != b:
                        scores[a - 1, b] += 8
        argmax = scores.argmax(axis=1)
        heads = max_spanning_tree(scores)
        assert is_tree(heads.tolist()) and (heads == 0).sum() == 1 and find_cycle([-1, *heads]) is None
        assert np.isfinite(tree_score(scores, heads))
        if trial < 5:
            assert not one_change_improves(scores, heads)
        if kind != "normal":
            assert not is_tree(argmax.tolist())


def test_a_batch_decodes_like_its_sentences_and_padding_gets_the_root():
    rng = np.random.default_rng(3)
    lengths = [7, 1, 12, 4]
    steps = max(lengths)
    arcs = torch.full((steps, len(lengths), steps + 1), float("-inf"))
    for column, n in enumerate(lengths):
        arcs[:n, column, :n + 1] = torch.from_numpy(random_scores(n, rng, "root-heavy")).float()
    heads = decode_batch(arcs, torch.tensor(lengths))
    assert heads.shape == (steps, len(lengths)) and heads.dtype == torch.int64
    for column, n in enumerate(lengths):
        expected = max_spanning_tree(arcs[:n, column, :n + 1])
        assert heads[:n, column].tolist() == expected.tolist()
        assert heads[n:, column].eq(0).all()


def test_scores_without_a_tree_are_an_error():
    scores = np.full((3, 4), -np.inf)
    scores[:, 0] = 1.0  # every word can only hang off the root: no tree has one root child
    with pytest.raises(ValueError, match="exactly one word attached to the root"):
        max_spanning_tree(scores)
    scores = np.zeros((2, 3))
    scores[1] = -np.inf
    with pytest.raises(ValueError, match="no finite incoming arc|no tree"):
        max_spanning_tree(scores)
    with pytest.raises(ValueError, match="NaN"):
        max_spanning_tree(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match=r"\(n, n\+1\)"):
        max_spanning_tree(np.zeros((3, 3)))
    assert max_spanning_tree(np.zeros((0, 1))).tolist() == []


def test_is_tree_and_find_cycle():
    assert is_tree([2, 0, 2]) and not is_tree([0, 0, 2]) and not is_tree([2, 3, 1]) and not is_tree([1, 0])
    assert is_tree([3, 3, 0]) and not is_tree([3, 0, 1]) and not is_tree([2, 0, 4])  # cycle 1 <-> 3; head 4 beyond
    assert find_cycle([-1, 2, 3, 1]) == [1, 2, 3] and find_cycle([-1, 0, 1, 2]) is None
    assert find_cycle([-1, 0, 3, 4, 2]) == [2, 3, 4]
