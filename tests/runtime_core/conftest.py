"""Fixtures for the runtime-core behaviour tests (see helpers.Mode)."""

from __future__ import annotations

import pytest

from .helpers import Mode


@pytest.fixture(params=["eager", "traced"])
def mode(request) -> Mode:
    return Mode(request.param)
