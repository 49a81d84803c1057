"""A three-sentence treebank with forms, lemmas, UPOS, heads and relations, written as a prepared
dataset: the parsing and baseline tests count their numbers by hand on it."""
from __future__ import annotations

from pathlib import Path

from rnnrepro.data.prepared import write_json_gz

SENTENCES = [  # (form, lemma, upos, head, deprel) per word
    [("The", "the", "DET", 2, "det"), ("cat", "cat", "NOUN", 3, "nsubj"), ("sat", "sit", "VERB", 0, "root")],
    [("Mary", "Mary", "PROPN", 3, "nmod:poss"), ("'s", "'s", "PART", 1, "case"), ("dog", "dog", "NOUN", 4, "nsubj"),
     ("barked", "bark", "VERB", 0, "root"), (".", ".", "PUNCT", 4, "punct")],
    [("Dogs", "dog", "NOUN", 2, "nsubj"), ("bark", "bark", "VERB", 0, "root"), ("loudly", "loudly", "ADV", 2, "advmod")],
]
COLUMNS = ("form", "lemma", "upos", "head", "deprel")


def write_toy_treebank(folder: Path) -> str:
    """The sentences as the train, dev and test splits of a prepared dataset named ``toy``."""
    split = {name: [[word[k] for word in sentence] for sentence in SENTENCES] for k, name in enumerate(COLUMNS)}
    path = folder / "toy.json.gz"
    write_json_gz({"dataset": "toy", "splits": {s: split for s in ("train", "dev", "test")}}, path)
    return str(path)
