"""Reading the project's YAML files (``config/config.yaml``, the study files, the schemas) so that
every problem names the file, and the line where there is one.

- a syntax error: ``config/config.yaml, line 7, column 9: mapping values are not allowed here``;
- text that is not UTF-8: the line and the byte (a file saved in another encoding);
- a byte-order mark: a UTF-8 one at the very start is allowed (YAML allows it; some Windows
  editors write it); a UTF-16 or UTF-32 one, or U+FEFF anywhere else (two files pasted together),
  is named as a byte-order mark, with the line.
"""
from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import yaml

from .config_check import ConfigError

#: libyaml's safe loader where PyYAML was built with it (about ten times faster on the study
#: files, which the workflow parses at every invocation), else the pure-Python one.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

UTF8_BOM = codecs.BOM_UTF8
#: byte-order marks of encodings other than UTF-8, longest first (UTF-32's LE mark starts with UTF-16's)
OTHER_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def yaml_text(path: Path | str) -> str:
    """The text of the YAML file ``path``, checked to be UTF-8 with no byte-order mark but an
    optional UTF-8 one at the start (dropped). Raises :class:`ConfigError` naming the file."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a YAML file") from None
    for mark, encoding in OTHER_BOMS:
        if raw.startswith(mark):
            raise ConfigError(f"{path}: starts with a {encoding} byte-order mark: the file was saved as "
                              f"{encoding}; save it as UTF-8")
    if raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM):]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise ConfigError(f"{path}, line {line}, column {column}: not UTF-8 text (byte "
                          f"0x{raw[error.start]:02x}): save the file as UTF-8") from None
    stray = text.find("\ufeff")
    if stray >= 0:
        line = text.count("\n", 0, stray) + 1
        raise ConfigError(f"{path}, line {line}: a byte-order mark (U+FEFF) inside the file, where it "
                          "is not allowed (two files pasted together?): remove it")
    return text


def load_yaml(path: Path | str) -> Any:
    """The YAML file ``path`` parsed (safe loader); a problem raises :class:`ConfigError` naming the
    file and, for a syntax error, the line and column."""
    text = yaml_text(path)
    try:
        return yaml.load(text, Loader=SAFE_LOADER)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = error.problem or "invalid YAML"
        if error.context:  # what was being read, and where it began ("a flow sequence", line 6)
            began = error.context_mark
            problem += f" ({error.context}" + (f" that began at line {began.line + 1}, column {began.column + 1})"
                                               if began is not None and began is not mark else ")")
        raise ConfigError(f"{path}{where}: not valid YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
