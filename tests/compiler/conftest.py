"""Compiler test options: ``--update-golden`` rewrites the expected converted sources."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/compiler/golden/*.expected from the current compiler")
