"""Reading the project's YAML files: every problem names the file, and the line where there is one
(a syntax error, text that is not UTF-8, a byte-order mark where none belongs)."""
from __future__ import annotations

import codecs
import shutil
import subprocess
import sys

import pytest

from rnnrepro.plan.config_check import ConfigError
from rnnrepro.plan.yaml_file import load_yaml

SETTINGS = "# settings\nscale: mini\nstudies:\n  - pru\n"


def written(tmp_path, data: bytes):
    path = tmp_path / "config.yaml"
    path.write_bytes(data)
    return path


def problem(path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_yaml(path)
    return str(caught.value)


def test_plain_utf8_and_a_leading_utf8_byte_order_mark_read_the_same(tmp_path):
    plain = load_yaml(written(tmp_path, SETTINGS.encode()))
    assert plain == {"scale": "mini", "studies": ["pru"]}
    assert load_yaml(written(tmp_path, codecs.BOM_UTF8 + SETTINGS.encode())) == plain


def test_a_syntax_error_names_file_line_and_column_and_where_its_construct_began(tmp_path):
    path = written(tmp_path, b"scale: [mini\nstudies:\n  - pru\n")
    message = problem(path)
    assert message.startswith(f"{path}, line ")
    assert "not valid YAML" in message and "flow sequence that began at line 1, column 8" in message
    message = problem(written(tmp_path, b"scale: mini\nstudies: a: b\n"))
    assert ", line 2, column 11: not valid YAML: mapping values are not allowed" in message


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_file_saved_as_utf16_or_utf32_is_named_by_its_byte_order_mark(tmp_path, encoding):
    message = problem(written(tmp_path, SETTINGS.encode(encoding)))
    assert f"starts with a {encoding.upper()} byte-order mark" in message and "save it as UTF-8" in message


def test_a_byte_order_mark_inside_the_file_is_named_with_its_line(tmp_path):
    message = problem(written(tmp_path, SETTINGS.encode() + codecs.BOM_UTF8 + b"extra_cells: []\n"))
    assert message == (f"{tmp_path / 'config.yaml'}, line 5: a byte-order mark (U+FEFF) inside the file, "
                       "where it is not allowed (two files pasted together?): remove it")


def test_text_that_is_not_utf8_is_named_with_line_column_and_byte(tmp_path):
    message = problem(written(tmp_path, SETTINGS.encode() + "note: caf\u00e9\n".encode("latin-1")))
    assert message == f"{tmp_path / 'config.yaml'}, line 5, column 10: not UTF-8 text (byte 0xe9): save the file as UTF-8"


def test_a_missing_file_is_named(tmp_path):
    assert problem(tmp_path / "absent.yaml") == f"{tmp_path / 'absent.yaml'}: file not found"


def test_snakemake_names_the_config_file_and_line_of_a_yaml_error(repo, tmp_path):
    """Snakemake's own message ("Config file is not valid JSON or YAML") names neither: the
    Snakefile reads config/config.yaml first."""
    project = tmp_path / "project"
    shutil.copytree(repo / "config", project / "config")
    shutil.copy(repo / "Snakefile", project / "Snakefile")
    shutil.copytree(repo / "workflow", project / "workflow")
    config = project / "config" / "config.yaml"
    lines = config.read_text().splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines) if line.startswith("scale:"))
    lines[number] = "scale: [mini\n"
    config.write_text("".join(lines))
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "all"],
                            cwd=project, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "Configuration error: config/config.yaml, line " in result.stderr + result.stdout
    assert f"(while parsing a flow sequence that began at line {number + 1}, column 8)" in result.stderr + result.stdout
