"""The README and the documentation site: the site builds with every link and anchor resolved,
the README stays one screen of a user's guide whose links resolve, and no commit hash or clock
time sits in the README, the configuration, the study files or the package's docstrings (measured
figures live in docs/performance.md, each with its machine, commit and date)."""
from __future__ import annotations

import re
import subprocess
import sys

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


def measured_module(repo):
    import importlib.util

    spec = importlib.util.spec_from_file_location("measured", repo / "benchmarks" / "measured.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: a measured figure: a number with a unit of time or a ratio ("37.1 minutes", "9.4 s", "1.15×")
FIGURE = re.compile(r"(?<![\w.])\d[\d,.]*\s*(?:s|ms|min|minutes|hours?|GPU-hours|CPU-hours|×|x)(?![\w-])")


def test_the_performance_page_s_tables_are_what_the_benchmarks_recorded(repo):
    """Each table of docs/performance.md is generated from its benchmarks/measured/<name>.jsonl
    (``python benchmarks/measured.py``), every row names its machine, commit, time and how it was
    recorded, and the hand-written text around the tables carries no figure of its own."""
    measured = measured_module(repo)
    page = (repo / "docs" / "performance.md").read_text(encoding="utf-8")
    names = measured.blocks(page)
    assert names and sorted(names) == sorted(path.stem for path in (repo / "benchmarks" / "measured").glob("*.jsonl"))
    assert measured.render(page) == page, "a table was edited by hand: run python benchmarks/measured.py"
    for name in names:
        for row in measured.rows(name):
            assert all(row.get(key) for key in measured.CONTEXT), (name, row)
    prose = re.sub(r"<!-- measured: ([\w-]+) -->.*?<!-- end measured: \1 -->", "", page, flags=re.DOTALL)
    prose = re.sub(r"`[^`]*`", "", prose)
    assert not FIGURE.findall(prose), FIGURE.findall(prose)


def test_a_recorded_row_lands_in_its_table(repo, tmp_path, monkeypatch):
    measured = measured_module(repo)
    page = tmp_path / "performance.md"
    page.write_text("text\n\n<!-- measured: demo -->\nstale\n<!-- end measured: demo -->\n\nmore text\n")
    monkeypatch.setattr(measured, "PAGE", page)
    monkeypatch.setattr(measured, "FOLDER", tmp_path / "measured")
    row = {**measured.context(repo / "benchmarks" / "measured.py", repo), "case": "a | b", "seconds": 1234.5678}
    measured.record("demo", [row])
    measured.record("demo", [{**row, "seconds": 2.0}])
    text = page.read_text()
    assert text.startswith("text\n\n<!-- measured: demo -->\n| machine | commit | measured | recorded | case | seconds |")
    assert "| a \\| b | 1,235 |" in text and "| a \\| b | 2 |" in text and "stale" not in text
    assert text.endswith("<!-- end measured: demo -->\n\nmore text\n")
    assert row["recorded"] == "by `benchmarks/measured.py`"
    with pytest.raises(SystemExit, match="has no table for 'other'"):
        measured.record("other", [row])


def test_the_figure_pattern_finds_figures():
    assert FIGURE.search("took 37.1 minutes") and FIGURE.search("9.4 s against") and FIGURE.search("1.15× faster")
    assert not FIGURE.search("2-core machine") and not FIGURE.search("Python 3.11") and not FIGURE.search("T = 100")


def test_time_commands_reads_the_readme_s_two_commands_and_snakemake_s_job_times(repo, monkeypatch):
    """benchmarks/time_commands.py times the README's commands as written (their marker comments)
    and reads each job's wall time from Snakemake's output."""
    import importlib.util

    monkeypatch.syspath_prepend(str(repo / "benchmarks"))
    spec = importlib.util.spec_from_file_location("time_commands", repo / "benchmarks" / "time_commands.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.readme_command("main").startswith("bash scripts/setup.sh && ")
    assert module.readme_command("tests").endswith("-m pytest")
    output = "\n".join([
        "[Sun Nov 29 08:00:00 2026]", "rule train_job:", "    output: x", "    jobid: 7", "",
        "[Sun Nov 29 08:00:01 2026]", "localrule plan:", "    jobid: 3",
        "[Sun Nov 29 08:00:05 2026]", "Finished jobid: 3 (Rule: plan)",
        "[Sun Nov 29 08:01:40 2026]", "Finished jobid: 7 (Rule: train_job)"])
    assert module.job_seconds(output) == {"train_job": [100.0], "plan": [4.0]}
    assert module.summary_of("main", output) == "2 jobs, 104 s of job time (100 training)"
    assert module.summary_of("tests", "==== 3 passed, 1 skipped in 9.50s ====") == "3 passed, 1 skipped in 9.50s"
