"""scripts/setup.sh installs with uv, which does not read pip's configuration: pip's package
sources must reach uv as arguments (scripts/pip_settings_for_uv.py), or a machine whose torch
comes from a local wheel folder would pull another build from PyPI."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

from conftest import REPO

SCRIPT = REPO / "scripts" / "pip_settings_for_uv.py"
spec = importlib.util.spec_from_file_location("pip_settings_for_uv", SCRIPT)
pip_settings = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pip_settings)

LISTED = """\
:env:.find-links='/srv/wheels'
:env:.index-url='https://mirror.example/simple'
global.cert='/etc/ssl/certs/ca.pem'
global.constraint='/etc/pip/constraints.txt'
global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'
global.find-links='/srv/wheels /opt/wheels'
global.index-url='https://other.example/simple'
global.timeout='60'
"""


def test_pips_sources_become_uvs_arguments_each_once():
    assert pip_settings.uv_arguments(LISTED) == [
        "--find-links", "/srv/wheels", "--find-links", "/opt/wheels",
        "--index-url", "https://mirror.example/simple",  # one index: the environment's, as in pip
        "--extra-index-url", "file:///opt/a/simple", "--extra-index-url", "file:///opt/b/simple",
        "--constraint", "/etc/pip/constraints.txt",
    ]
    assert pip_settings.settings(LISTED)["cert"] == ["/etc/ssl/certs/ca.pem"]


def test_no_pip_configuration_gives_no_arguments():
    assert pip_settings.uv_arguments("") == []


def test_the_script_reads_pips_own_configuration():
    """Run as setup.sh runs it: a PIP_* variable reaches uv's arguments, and --cert prints the
    certificate (empty when none is set)."""
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": "/srv/wheels",
           "PIP_CERT": "/etc/ssl/certs/ca.pem"}
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, check=True)
    assert run.stdout.split() == ["--find-links", "/srv/wheels"]
    cert = subprocess.run([sys.executable, str(SCRIPT), "--cert"], capture_output=True, text=True, env=env, check=True)
    assert cert.stdout.strip() == "/etc/ssl/certs/ca.pem"
    wrong = subprocess.run([sys.executable, str(SCRIPT), "--help-me"], capture_output=True, text=True, env=env)
    assert wrong.returncode == 2 and "pip config list" in wrong.stderr
