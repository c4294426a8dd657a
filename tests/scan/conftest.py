"""Fixtures for the scan tests: `mode` runs a function eagerly or traced (see tests.runtime_core.helpers.Mode)."""

from __future__ import annotations

import pytest

from tests.runtime_core.helpers import Mode


@pytest.fixture(params=["eager", "traced"])
def mode(request) -> Mode:
    return Mode(request.param)
