"""The kinds of check a study's YAML names (``kind:``): one module each (:mod:`.compare`,
:mod:`.best`, :mod:`.threshold`, :mod:`.trend`, :mod:`.within`) on the common :class:`Check`
of :mod:`.base`; :mod:`.build` makes a claim's ``check:`` into one of them, a paper check
(``kind: python``) or all of a list."""
from .base import NEUTRAL, NEUTRAL_SEEDS, PAPER_CHECKS, Check
from .build import AllOf, build_check

__all__ = ["AllOf", "Check", "NEUTRAL", "NEUTRAL_SEEDS", "PAPER_CHECKS", "build_check"]
