"""Fetch catalogue datasets: the official URL first, then a local mirror; verify; write atomically.

For every file of a dataset (see :mod:`rnnrepro.data.sources`) :func:`fetch_dataset` makes
``dest_dir/<name>`` hold the plain (decompressed) content with the catalogued checksum:

1. a file already there that verifies is kept as it is;
2. otherwise each official URL is tried in turn (streamed to a temporary file next to
   the target, gunzipped when the URL serves gzip, verified);
3. when every URL fails (no network, HTTP error, or content that does not verify), the
   gzipped copy in the data mirror is used: the mirror folder given as argument, else
   the one named by the ``RNNREPRO_DATA_MIRROR`` environment variable, else
   ``shared/data`` beside the repository if it has a MANIFEST.md. Its stored sha256
   is checked, then it is decompressed and the plain content is verified.

Nothing unverified ever carries the final name: data is written under a temporary name
in the destination folder and moved into place with :func:`os.replace` only after it
verified; temporary files are removed on every failure.

Command line (used by the workflow)::

    python -m rnnrepro.data.fetch KEY DEST [--mirror DIR] [--timeout S] [--split NAME]...
        [--skip-unavailable] [--no-progress]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import http.client
import logging
import os
import shutil
import sys
import urllib.request
import uuid
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from tqdm import tqdm

from rnnrepro.atomic import atomic_path
from rnnrepro.data.sources import DATASETS, Dataset, FileSource, dataset

__all__ = [
    "MIRROR_ENV_VAR",
    "DataError",
    "ChecksumError",
    "SourceUnavailable",
    "fetch_dataset",
    "fetch_file",
    "verify_file",
    "sha256_of",
    "write_checksums",
    "git_blob_of",
    "main",
    "mirror_beside",
]

logger = logging.getLogger(__name__)

MIRROR_ENV_VAR = "RNNREPRO_DATA_MIRROR"
DEFAULT_TIMEOUT = 20.0
_CHUNK = 1 << 20

# What can go wrong while downloading or unpacking a download: these make us try the
# next URL and finally the mirror instead of failing.
_TRANSFER_ERRORS = (OSError, http.client.HTTPException, EOFError, zlib.error)

PathLike = str | os.PathLike[str]


class DataError(Exception):
    """Base class of the errors raised while obtaining data."""


class ChecksumError(DataError):
    """Content whose checksum differs from the catalogue.

    Attributes:
        path_or_url: the file or URL whose content was checked.
        expected: the catalogued digest.
        actual: the digest of the content at hand.
        algorithm: ``"sha256"`` or ``"git blob"``.
    """

    def __init__(
        self, path_or_url: PathLike, expected: str, actual: str, algorithm: str = "sha256"
    ) -> None:
        self.path_or_url = str(path_or_url)
        self.expected = expected
        self.actual = actual
        self.algorithm = algorithm
        super().__init__(
            f"checksum mismatch for {self.path_or_url}: expected {algorithm} {expected}, "
            f"got {actual}"
        )


class SourceUnavailable(DataError):
    """No source could deliver a file: every URL failed and the mirror could not be used.

    Attributes:
        name: the file that was wanted.
        attempts: ``(url, error)`` for each official URL tried.
        mirror_note: what happened with the mirror (path tried, or why none was used).
    """

    def __init__(self, name: str, attempts: Sequence[tuple[str, str]], mirror_note: str) -> None:
        self.name = name
        self.attempts = list(attempts)
        self.mirror_note = mirror_note
        lines = [f"could not obtain {name}:"]
        lines += [f"  - {url}: {error}" for url, error in self.attempts]
        if not self.attempts:
            lines.append("  - (no official URL in the catalogue)")
        lines.append(f"  - mirror: {mirror_note}")
        super().__init__("\n".join(lines))


# --------------------------------------------------------------------------- checksums


def _digests(path: PathLike, sha256: bool = True, git_blob: bool = False) -> tuple[str, str]:
    """Compute the requested digests of a file in a single pass ('' for those not asked)."""
    sha = hashlib.sha256() if sha256 else None
    blob = None
    if git_blob:
        blob = hashlib.sha1()
        blob.update(b"blob %d\0" % os.path.getsize(path))
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            if sha is not None:
                sha.update(chunk)
            if blob is not None:
                blob.update(chunk)
    return (sha.hexdigest() if sha else "", blob.hexdigest() if blob else "")


def sha256_of(path: PathLike) -> str:
    """Return the hex sha256 of a file's bytes."""
    return _digests(path, sha256=True)[0]


def git_blob_of(path: PathLike) -> str:
    """Return the git blob id of a file (what ``git hash-object`` prints)."""
    return _digests(path, sha256=False, git_blob=True)[1]


def verify_file(path: PathLike, source: FileSource, label: PathLike | None = None) -> None:
    """Check a plain file against every checksum the catalogue records for it.

    Args:
        path: the file to check.
        source: its catalogue entry (``sha256`` and/or ``git_blob`` are checked).
        label: how to name the content in the error (e.g. the URL it came from);
            defaults to ``path``.

    Raises:
        ChecksumError: when a digest differs.
    """
    sha, blob = _digests(
        path, sha256=source.sha256 is not None, git_blob=source.git_blob is not None
    )
    origin = label if label is not None else path
    if source.sha256 is not None and sha != source.sha256:
        raise ChecksumError(origin, source.sha256, sha)
    if source.git_blob is not None and blob != source.git_blob:
        raise ChecksumError(origin, source.git_blob, blob, algorithm="git blob")


# ------------------------------------------------------------------------ file transfer


@contextlib.contextmanager
def _temporary(dest_dir: Path, name: str) -> Iterator[Path]:
    """Yield a fresh temporary path in ``dest_dir``; remove it on exit if it still exists."""
    tmp = dest_dir / f".{name}.{uuid.uuid4().hex[:12]}.part"
    try:
        yield tmp
    finally:
        tmp.unlink(missing_ok=True)


def _download(url: str, out: Path, timeout: float, progress: bool, desc: str) -> None:
    """Stream ``url`` into the new file ``out``, with a tqdm bar labelled ``desc``."""
    with urllib.request.urlopen(url, timeout=timeout) as response, open(out, "xb") as handle:
        length = response.headers.get("Content-Length")
        with tqdm(
            total=int(length) if length and length.isdigit() else None,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=desc,
            disable=not progress,
            leave=False,
        ) as bar:
            while chunk := response.read(_CHUNK):
                handle.write(chunk)
                bar.update(len(chunk))


def _unpack(src: Path, out: Path, gzipped: bool) -> None:
    """Write the content of ``src``, gunzipped if ``gzipped``, to the new file ``out``."""
    opener = gzip.open if gzipped else open
    with opener(src, "rb") as fin, open(out, "xb") as fout:
        shutil.copyfileobj(fin, fout, _CHUNK)


def _from_url(
    source: FileSource, url: str, target: Path, timeout: float, progress: bool
) -> None:
    """Download ``url``, unpack if needed, verify, and move the result to ``target``."""
    dest_dir = target.parent
    with _temporary(dest_dir, source.name) as plain:
        if source.url_gzipped:
            with _temporary(dest_dir, source.name + ".gz") as packed:
                _download(url, packed, timeout, progress, source.name)
                _unpack(packed, plain, gzipped=True)
        else:
            _download(url, plain, timeout, progress, source.name)
        verify_file(plain, source, label=url)
        os.replace(plain, target)


def _from_mirror(source: FileSource, mirror_file: Path, target: Path) -> None:
    """Check the stored mirror file, decompress it, verify, and move the result to ``target``."""
    if source.mirror_sha256 is not None:
        actual = sha256_of(mirror_file)
        if actual != source.mirror_sha256:
            raise ChecksumError(mirror_file, source.mirror_sha256, actual)
    with _temporary(target.parent, source.name) as plain:
        _unpack(mirror_file, plain, gzipped=mirror_file.name.endswith(".gz"))
        verify_file(plain, source, label=f"{mirror_file} (decompressed)")
        os.replace(plain, target)


def _describe(error: BaseException) -> str:
    """One-line description of a transfer error."""
    text = str(error) or repr(error)
    return f"{type(error).__name__}: {text}"


def _mirror_root(mirror: PathLike | None) -> Path | None:
    """The mirror folder to use: the argument, else the environment variable, else None."""
    if mirror is not None:
        return Path(mirror)
    from_env = os.environ.get(MIRROR_ENV_VAR)
    return Path(from_env) if from_env else None


def mirror_beside(checkout: PathLike) -> Path | None:
    """``shared/data`` beside a checkout (``<checkout>/../shared/data``) when it holds a MANIFEST.md,
    else None: where the workflow looks for a mirror when neither ``data.mirror`` in
    config/config.yaml nor :data:`MIRROR_ENV_VAR` names one."""
    candidate = Path(checkout).resolve().parent / "shared" / "data"
    return candidate if (candidate / "MANIFEST.md").is_file() else None


def _keep_existing(target: Path, source: FileSource) -> bool:
    """True if ``target`` exists and verifies; a file that does not verify is removed."""
    if not target.exists():
        return False
    try:
        verify_file(target, source)
    except ChecksumError as error:
        logger.warning("%s; removing it and fetching it again", error)
        target.unlink()
        return False
    logger.info("%s is present and verified", target)
    return True


def fetch_file(
    source: FileSource,
    dest_dir: PathLike,
    mirror: PathLike | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: bool = True,
) -> Path:
    """Make ``dest_dir/source.name`` hold the verified plain content of one file.

    Tries the existing file, then each official URL, then the mirror (see the module
    docstring). Returns the path of the verified file.

    Raises:
        ChecksumError: the mirror file, or its decompressed content, does not verify.
        SourceUnavailable: every URL failed and no usable mirror copy exists.
    """
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / source.name
    if _keep_existing(target, source):
        return target

    attempts: list[tuple[str, str]] = []
    for url in source.urls:
        try:
            _from_url(source, url, target, timeout, progress)
        except ChecksumError as error:
            logger.warning("%s; trying the next source", error)
            attempts.append((url, str(error)))
        except _TRANSFER_ERRORS as error:
            logger.debug("could not download %s (%s)", url, _describe(error))
            attempts.append((url, _describe(error)))
        else:
            logger.info("downloaded %s from %s", target, url)
            return target

    root = _mirror_root(mirror)
    if root is None:
        note = (f"no mirror configured (give --mirror DIR / mirror=..., set {MIRROR_ENV_VAR}, "
                f"or data.mirror in config/config.yaml)")
        raise SourceUnavailable(source.name, attempts, note)
    if source.mirror_path is None:
        note = f"the catalogue records no mirror copy of {source.name} (mirror {root} not used)"
        raise SourceUnavailable(source.name, attempts, note)
    mirror_file = root / source.mirror_path
    if not mirror_file.is_file():
        raise SourceUnavailable(source.name, attempts, f"{mirror_file} does not exist")
    _from_mirror(source, mirror_file, target)
    logger.info(
        "official URL%s unavailable; took %s from the mirror file %s",
        "" if len(source.urls) == 1 else "s", target, mirror_file,
    )
    return target


def _select(ds: Dataset, splits: Iterable[str] | None) -> dict[str, FileSource]:
    """The files of ``ds`` for the requested splits (all when None); KeyError on unknown ones."""
    if splits is None:
        return dict(ds.files)
    wanted = list(splits)
    unknown = [split for split in wanted if split not in ds.files]
    if unknown:
        raise KeyError(
            f"dataset {ds.key!r} has no split {', '.join(map(repr, unknown))}; "
            f"its splits: {', '.join(ds.files)}"
        )
    return {split: ds.files[split] for split in wanted}


def fetch_dataset(
    key: str | Dataset,
    dest_dir: PathLike,
    mirror: PathLike | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: bool = True,
    splits: Iterable[str] | None = None,
    skip_unavailable: bool = False,
) -> dict[str, Path]:
    """Fetch and verify the files of a dataset into ``dest_dir``.

    Args:
        key: a key of :data:`rnnrepro.data.sources.DATASETS`, or a :class:`Dataset`.
        dest_dir: destination folder (created if needed); each file becomes
            ``dest_dir/<name>`` with its plain, decompressed content.
        mirror: data mirror root; defaults to ``$RNNREPRO_DATA_MIRROR``.
        timeout: network timeout in seconds, per URL.
        progress: show a tqdm bar while downloading.
        splits: fetch only these splits/roles (default: all files of the dataset).
        skip_unavailable: leave out (with a warning) files that no source can deliver,
            e.g. the GSD train sets when offline, instead of raising SourceUnavailable.
            Checksum errors are raised all the same.

    Returns:
        split/role name -> path of the verified file.

    Raises:
        KeyError: unknown dataset key or split.
        ChecksumError: a mirror file, or its decompressed content, does not verify.
        SourceUnavailable: a file could be obtained from no source (unless skipped).
    """
    ds = key if isinstance(key, Dataset) else dataset(key)
    paths = {}
    for split, source in _select(ds, splits).items():
        try:
            paths[split] = fetch_file(
                source, dest_dir, mirror=mirror, timeout=timeout, progress=progress
            )
        except SourceUnavailable as error:
            if not skip_unavailable:
                raise
            logger.warning("skipping %s/%s: %s", ds.key, split, error)
    return paths


def write_checksums(paths: Iterable[PathLike], out: PathLike) -> None:
    """``sha256  name`` of each file (``sha256sum -c`` reads it), written atomically: the mark
    of a dataset folder whose every file has been fetched and verified."""
    lines = [f"{sha256_of(path)}  {Path(path).name}" for path in sorted(paths, key=lambda p: Path(p).name)]
    with atomic_path(out) as tmp:
        tmp.write_text("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- the CLI


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m rnnrepro.data.fetch``."""
    width = max(len(key) for key in DATASETS)
    listing = "\n".join(
        f"  {key:<{width}}  {ds.description}\n  {'':<{width}}  splits: {', '.join(ds.files)}"
        for key, ds in DATASETS.items()
    )
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.data.fetch",
        description=(
            "Fetch a dataset into DEST: try the official URLs, fall back to a local data "
            "mirror, verify every file's checksum, and write DEST/<file> atomically."
        ),
        epilog=f"datasets:\n{listing}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "key", metavar="KEY", choices=list(DATASETS), help="dataset key (see the list below)"
    )
    parser.add_argument("dest", metavar="DEST", type=Path, help="destination folder")
    parser.add_argument(
        "--mirror",
        metavar="DIR",
        type=Path,
        default=None,
        help=f"data mirror root, used when the official URLs fail (default: ${MIRROR_ENV_VAR})",
    )
    parser.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="network timeout per URL in seconds (default: %(default)s)",
    )
    parser.add_argument(
        "--split",
        metavar="NAME",
        action="append",
        dest="splits",
        help="fetch only this split/role; repeat for several (default: all)",
    )
    parser.add_argument(
        "--skip-unavailable",
        action="store_true",
        help="leave out files that no source can deliver (with a warning) instead of failing;"
        " checksum errors still fail",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="do not show download progress bars"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (1 with a one-message log on failure)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s")
    try:
        paths = fetch_dataset(
            args.key,
            args.dest,
            mirror=args.mirror,
            timeout=args.timeout,
            progress=not args.no_progress,
            splits=args.splits,
            skip_unavailable=args.skip_unavailable,
        )
    except KeyError as error:
        logger.error("%s", error.args[0] if error.args else error)
        return 1
    except (DataError, OSError) as error:
        logger.error("%s", error)
        return 1
    for split, path in paths.items():
        logger.info("%s: %s", split, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
