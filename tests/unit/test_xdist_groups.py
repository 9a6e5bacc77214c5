"""The test run's own machinery: tests that share an `xdist_group` run on one worker.

The real-engine tests rely on it to run one engine at a time. pytest-xdist's `loadgroup`
passes a test's group to its scheduler as a suffix of the test's id; when a pytest release
keys tests another way, the suffix is lost and the groups are silently spread over the
workers (pytest 9.2 with pytest-xdist 3.8), so this checks that the suffix arrives.
"""

from __future__ import annotations

import os

import pytest


@pytest.mark.xdist_group("xdist-canary")
def test_an_xdist_group_reaches_the_scheduler(request: pytest.FixtureRequest) -> None:
    # a worker of a loadgroup run holds the flag xdist sets from --dist
    if "PYTEST_XDIST_WORKER" not in os.environ or not getattr(
        request.config.option, "loadgroup", False
    ):
        pytest.skip("not run by pytest-xdist with --dist loadgroup (a whole-suite run is)")
    assert request.node.nodeid.endswith("@xdist-canary"), request.node.nodeid
