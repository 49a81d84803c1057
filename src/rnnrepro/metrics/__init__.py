"""Evaluation metrics shared by tasks: dependency attachment scores as CoNLL 2018 defines them."""
from .conll18 import (
    AttachmentScores,
    ParsedSentence,
    attachment_scores,
    evaluate_files,
    read_conllu_sentences,
    universal_relation,
    write_conllu,
)

__all__ = ["AttachmentScores", "ParsedSentence", "attachment_scores", "evaluate_files",
           "read_conllu_sentences", "universal_relation", "write_conllu"]
