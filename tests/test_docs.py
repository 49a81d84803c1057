"""The README and the documentation site: the site builds with every link and anchor resolved,
the README stays one screen of a user's guide whose links resolve, and no commit hash or clock
time sits in the README, the configuration, the study files or the package's docstrings (measured
figures live in docs/performance.md, each with its machine, commit and date)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README_MOST_LINES = 250
LINK = re.compile(r"\]\(([^)\s]+)\)")
SHORT_HASH = re.compile(r"(?<![~\w.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7}(?![\w.])")
CLOCK_TIME = re.compile(r"(?<![\w:=.])[0-2]?\d:[0-5]\d(?![\d:])")


def headings(markdown: str) -> set[str]:
    """The anchors MkDocs gives a page's headings (Python-Markdown's toc slugify)."""
    from markdown.extensions.toc import slugify

    return {slugify(line.lstrip("#").strip(), "-") for line in markdown.splitlines() if line.startswith("#")}


def test_the_documentation_site_builds_with_every_link_resolved(repo, tmp_path):
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                           cwd=repo, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    nav = (repo / "mkdocs.yml").read_text()
    pages = sorted(path.name for path in (repo / "docs").glob("*.md"))
    assert all(page in nav for page in pages), "every page of docs/ is in the site's navigation"
    assert (tmp_path / "site" / "method" / "index.html").is_file()


def test_the_readme_is_one_screen_whose_links_resolve(repo):
    text = (repo / "README.md").read_text()
    assert len(text.splitlines()) <= README_MOST_LINES
    for section in ("## Two commands", "## What you get", "## A map of the package", "## Extending it"):
        assert section in text
    assert not re.search(r"\b[0-9a-f]{7,40}\b", text), "a hex word that reads as a commit hash"
    links = [link for link in LINK.findall(text) if not link.startswith(("http://", "https://"))]
    assert links, "the README links the documentation"
    for link in links:
        path, _, anchor = link.partition("#")
        target = repo / path
        assert target.exists(), link
        if anchor:
            assert anchor in headings(target.read_text()), link


@pytest.mark.parametrize("pattern", [SHORT_HASH, CLOCK_TIME], ids=["commit hash", "clock time"])
def test_no_commit_hash_or_clock_time_outside_the_performance_page(repo, pattern):
    files = [repo / "README.md", *(repo / "config").rglob("*.yaml"), *(repo / "src" / "rnnrepro").rglob("*.py")]
    found = [f"{path.relative_to(repo)}:{number}: {line.strip()}" for path in files
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line) and "srun" not in line and "--time" not in line]
    assert not found, "\n".join(found)


def test_the_patterns_find_what_they_are_for():
    assert SHORT_HASH.search("measured at 6312b34 on") and not SHORT_HASH.search("cfg~1a2b3c4d5e, 0.1466578")
    assert CLOCK_TIME.search("started 15:06 on") and not CLOCK_TIME.search("ratio 1:2.5, :4096:8")
