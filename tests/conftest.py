"""Test configuration.

With MINIGRAD_REQUIRE_TORCH=1 (set by .ci/run) a test skipped because PyTorch is
missing becomes a failure, so CI proves the mirror tests ran. Without it, a user's
plain ``pytest`` passes with those tests skipped.
"""
import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("minigrad", max_examples=25, deadline=None, derandomize=True)
settings.load_profile("minigrad")


def _examples_from_the_tests_alone():
    """Derandomized Hypothesis still mixes constants from every non-installed module loaded so far (minigrad's own
    source, and whatever earlier tests imported) into its draws, so one test file run alone, the whole suite, and
    a copy at another path draw different examples. The recorded PyTorch outputs (``tests/oracle.py``) are found
    either way, but a run without PyTorch can only replay the examples that were recorded: without those
    constants a test's examples depend only on its own code and Hypothesis's version (pinned in ``setup.cfg``).
    This reaches into Hypothesis's internals; if they change, draws are as before and nothing else changes."""
    try:
        from hypothesis.internal.conjecture import providers
        empty = providers.Constants()
    except (ImportError, AttributeError):
        return
    if hasattr(providers, "_get_local_constants"):
        providers._get_local_constants = lambda: empty


_examples_from_the_tests_alone()

REQUIRE_TORCH = os.environ.get("MINIGRAD_REQUIRE_TORCH") == "1"


def _is_torch_skip(report):
    if not report.skipped or hasattr(report, "wasxfail"):   # an expected failure is not a skip
        return False
    text = str(report.longrepr)
    return "torch" in text.lower()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_TORCH and _is_torch_skip(report):
        report.outcome = "failed"
        report.longrepr = f"PyTorch mirror test skipped but MINIGRAD_REQUIRE_TORCH=1: {report.longrepr}"


def pytest_collectreport(report):
    if REQUIRE_TORCH and _is_torch_skip(report):
        report.outcome = "failed"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# Each test module is imported from seeded global generators (tests/oracle.py seeds them before each test too): data a
# module draws at import time does not depend on which modules were imported before it, so recorded PyTorch outputs
# are found again in any session. And under the "minigrad" Hypothesis profile: importing PyTorch's test internals
# (the op database) loads PyTorch's own profile ("dev": 10 examples; "pytorch_ci": 50 when $CI is set), and @given
# takes the profile current when the module is imported, so without this every module collected after the op
# database's would draw other examples, and other ones on a CI machine than on a desk.
@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if isinstance(collector, pytest.Module):
        from tests import oracle
        oracle.seed_global_generators()
        if settings.get_current_profile_name() != "minigrad":
            settings.load_profile("minigrad")
    yield


# PyTorch live or recorded (tests/oracle.py): each test's calls to oracle.ask are numbered from its start; in record
# mode (tests/fixtures/record.py) the records are written when the session ends.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    from tests import oracle
    oracle.begin_test(item)
    try:
        yield
    finally:
        oracle.end_test()


def pytest_sessionfinish(session, exitstatus):
    from tests import oracle
    if oracle.RECORDING:
        some = bool(session.config.option.keyword) or any("::" in a for a in session.config.args)
        for path, calls in oracle.write_recorded(keep_others=some):   # -k or test ids: the others' records kept
            print(f"\nrecorded {calls} PyTorch calls in {path}")
