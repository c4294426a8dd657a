"""One corpus, two backends: the option that runs the corpus tests on the JAX backend as well.

The tests of the modules in `CORPUS` (control flow, scan, the compiler's
behaviour, gradients, generated programs) are parametrized by ``backend``:
``numpy`` runs them as written; ``jax`` runs every graph they make through
`tests.backends.differential.DifferentialProgram`, which runs it on the numpy
executor and on the JAX backend, asserts they agree (outputs, errors,
printed text) and returns JAX's outcome to the test, so the test's own
assertions check the JAX backend too.

    pytest                          # a sample of the corpus on JAX (1 test in SAMPLE, by test id): CI
    pytest --jax-corpus=full        # every corpus test on both backends
    pytest --jax-corpus=off         # numpy only
    pytest --update-golden          # rewrite the golden files (converted sources in tests/compiler/golden,
                                    # lowered graphs in tests/execute/golden) from the current code

The op table and generated programs also run on JAX batched, many cases in
one compiled function (``tests/backends``). Without JAX installed the JAX
runs are left out, and ``tests/backends`` says so in one skip.
"""

from __future__ import annotations

import importlib.util
import zlib

import pytest

CORPUS = ("tests/runtime_core/", "tests/scan/", "tests/runtime/", "tests/compiler/test_behaviour.py",
          "tests/compiler/test_properties_tensors.py", "tests/autodiff/test_loops.py", "tests/autodiff/test_api.py",
          "tests/autodiff/test_checkpoint.py", "tests/autodiff/test_scan.py", "tests/ops/test_logging_ops.py",
          "tests/ops/test_op_table.py::test_traced_matches_numpy")
SAMPLE = 4  # 1 corpus test in SAMPLE runs on JAX by default
# Corpus tests whose graphs XLA cannot compile and that cannot skip (threads): tests/backends covers them.
NOT_ON_JAX = {
    "tests/runtime_core/test_call_path.py::test_scalars_0d_arrays_and_array_subclasses_key_the_trace_they_need":
        "passes a masked array, which backend='jax' refuses (tests/backends/test_jax_backend.py checks that)",
    "tests/runtime/test_trace_state.py::test_one_function_first_traced_from_several_threads_at_once":
        "appends in a loop with no bound, from threads (tests/backends/test_jax_backend.py traces from threads)",
}
HAVE_JAX = importlib.util.find_spec("jax") is not None
needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX "
                                                    "backend's tests")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files from the current code instead of comparing with them")
    parser.addoption("--jax-corpus", choices=("sample", "full", "off"), default="sample",
                     help="run the corpus tests on the JAX backend as well: a sample of them (default), all, "
                          "or none")


def _in_corpus(nodeid: str) -> bool:
    return any(nodeid.startswith(prefix) for prefix in CORPUS)


def pytest_generate_tests(metafunc):
    if "backend" not in metafunc.fixturenames or not _in_corpus(metafunc.definition.nodeid):
        return
    if metafunc.definition.nodeid in NOT_ON_JAX:
        return
    mode = metafunc.config.getoption("--jax-corpus")
    backends = ["numpy", "jax"] if HAVE_JAX and mode != "off" else ["numpy"]
    metafunc.parametrize("backend", backends, indirect=True)


def pytest_collection_modifyitems(config, items):
    """Without JAX, skip every run parametrized with ``"jax"`` (whatever the parameter's name), saying so; leave
    out the JAX runs not in the sample (``--jax-corpus=full`` keeps them all)."""
    if not HAVE_JAX:
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {}).values()
            if any(isinstance(value, str) and value == "jax" for value in params):
                item.add_marker(needs_jax)
    if config.getoption("--jax-corpus") != "sample":
        return
    kept, left_out = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if params.get("backend") == "jax" and zlib.crc32(item.nodeid.encode()) % SAMPLE:
            left_out.append(item)
        else:
            kept.append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(autouse=True)
def backend(request, monkeypatch):
    """The backend the corpus test runs on (see the module docstring); "numpy" for every other test."""
    name = getattr(request, "param", "numpy")
    if name == "jax":
        from autoloop.backends.jax import compile_graph
        from autoloop.concrete_function import ConcreteFunction
        from tests.backends.differential import DifferentialProgram

        def compile(self, graph):
            return DifferentialProgram(graph, compile_graph)
        monkeypatch.setattr(ConcreteFunction, "compile", compile)
        monkeypatch.setattr(ConcreteFunction, "compiled", property(_compiled_for_jax))
    return name


def _compiled_for_jax(concrete):
    """The concrete function's differential program (a trace made for numpy keeps its numpy program)."""
    program = concrete.__dict__.get("_differential")
    if program is None:
        program = concrete.__dict__["_differential"] = concrete.compile(concrete.graph)
    return program


@pytest.fixture
def pythons_sigint_handler():
    """Python's own SIGINT handler (`KeyboardInterrupt`) for the test, as an interactive Python has it: a
    process started in the background by a non-interactive shell inherits SIGINT ignored, and Python then
    installs no handler, so Ctrl-C would reach nothing."""
    import signal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
