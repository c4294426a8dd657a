"""Test options: ``--update-golden`` rewrites the golden files (converted sources in
tests/compiler/golden, lowered graphs in tests/execute/golden) from the current code."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files from the current code instead of comparing with them")
