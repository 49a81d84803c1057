"""The test suite's own limits: a whole-workflow command (tests/conftest.py's ``run_tool``) is
called hung only after a generous time, which ``RNNREPRO_TEST_TIMEOUT`` overrides."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import WORKFLOW_TIMEOUT, run_tool, workflow_timeout


def test_a_workflow_command_has_a_generous_limit_by_default(monkeypatch):
    monkeypatch.delenv("RNNREPRO_TEST_TIMEOUT", raising=False)
    assert workflow_timeout() == WORKFLOW_TIMEOUT >= 2700  # 7x the ci workflow on an idle machine (380 s)


def test_the_limit_is_overridden_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RNNREPRO_TEST_TIMEOUT", "0.5")
    assert workflow_timeout() == 0.5
    with pytest.raises(subprocess.TimeoutExpired):
        run_tool([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path)
    assert run_tool([sys.executable, "-c", "print('quick')"], cwd=tmp_path, timeout=60).stdout == "quick\n"


@pytest.mark.parametrize("value", ["soon", "0", "-5"])
def test_a_limit_that_is_not_a_positive_number_is_refused(monkeypatch, value):
    monkeypatch.setenv("RNNREPRO_TEST_TIMEOUT", value)
    with pytest.raises(ValueError, match="RNNREPRO_TEST_TIMEOUT"):
        workflow_timeout()
