"""What the code generator writes: nested expressions, released names, in-place updates, error mapping.

Every graph here also runs on the reference interpreter, and the compiled
executor must agree with it bit for bit (`equivalence.assert_equivalent`):
the rewrites below change how the code reads and what memory it holds,
never what it computes or which error it raises.
"""

from __future__ import annotations

import ast
import re
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import autoloop as al
from autoloop.errors import InvalidArgumentError
from autoloop.execute import CompiledGraph, codegen, statements
from autoloop.execute.expressions import fill, locate, placeholders
from autoloop.execute.interpreter import interpret
from autoloop.ops import registry
from autoloop.ops.registry import OpDef
from tests.compiler.programs import make_function

from .equivalence import assert_equivalent, assert_identical

needs_columns = pytest.mark.skipif(not codegen.NESTING, reason="nesting needs Python 3.11's instruction columns")


def graph_of(fn, *args, autograph=False):
    return al.function(fn, autograph=autograph).get_concrete_function(*[al.constant(a) for a in args]).graph


def lines_of(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines()]


# -- templates ----------------------------------------------------------------------------------
@pytest.mark.parametrize("template, nestable", [
    ("({0} + {1})", (0, 1)),
    ("({0} * {0})", ()),
    ("{0}.sum(axis=None, dtype={0}.dtype, keepdims=False)", ()),
    ("({1} if {0} else {2})", (0,)),
    ("({0} if {0} > {1} else {1} if {0} < {1} else np.maximum({0}, {1}))", ()),
    ("np.concatenate(({0}, {1}, {2},), axis=0)", (0, 1, 2)),
    ("({0} < {1} < {2})", (0, 1)),
    ("({0} and {1})", (0,)),
    ("{1}[{0}]", (1, 0)),
    ("(lambda: {0})()", ()),
])
def test_placeholders_that_may_nest_are_evaluated_once_and_always_in_order(template, nestable):
    assert placeholders(template) == nestable


def test_filled_templates_record_where_each_op_sits():
    inner = fill("({0} * {1})", ["lv1", "lv1"], "Mul")
    outer = fill("({0} + {1})", ["lv2", inner], "Add")
    assert outer.text == "(lv2 + (lv1 * lv1))"
    assert [(start, end, node) for start, end, node in outer.spans] == [(7, 18, "Mul"), (0, 19, "Add")]
    assert locate(outer.spans, 8, 17) == "Mul" and locate(outer.spans, 1, 18) == "Add"
    assert locate(outer.spans, 20, 21) is None


def test_every_registered_template_nests_only_placeholders_it_uses_once():
    """The rule holds for the registry's own templates (each in the forms the generator asks for)."""
    for name, opdef in registry.all_ops().items():
        kernel = opdef.kernels.get("numpy")
        if not isinstance(kernel, registry.Kernel):
            continue
        for template in (kernel.expr, kernel.scalar_expr):
            if isinstance(template, str):
                text = template.replace("{{", "").replace("}}", "")
                for field in placeholders(template):
                    assert text.count("{%d}" % field) == 1, (name, template)


# -- nesting ------------------------------------------------------------------------------------
def sum_square(n):
    i = n - n
    result = n - n
    while i < n:
        result += i * i
        i += 1
    return result


def collatz(n):
    steps = n - n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@needs_columns
def test_sum_square_reads_like_the_loop_by_hand():
    graph = graph_of(sum_square, 10, autograph=True)
    compiled = CompiledGraph(graph)
    (loop,) = [node for node in ast.walk(ast.parse(compiled.source)) if isinstance(node, ast.While)]
    assert re.fullmatch(r"lv\d+ < p0", ast.unparse(loop.test)), compiled.source  # the test is the condition
    # i * i nested into its only use, and the sum bound to the loop variable at once
    assert any(re.fullmatch(r"(lv\d+) = \(\1 \+ \((lv\d+) \* \2\)\)", line) for line in lines_of(compiled.source))
    assert_equivalent(graph, [np.int32(10)], [np.int32(0)], [np.int32(-3)])


@needs_columns
def test_collatz_tests_its_branch_in_the_if_line():
    graph = graph_of(collatz, 27, autograph=True)
    compiled = CompiledGraph(graph)
    assert any(re.match(r"if \(\(lv\d+ % c\d+\) == c\d+\):", line) for line in lines_of(compiled.source)), \
        compiled.source
    assert_equivalent(graph, [np.int32(27)], [np.int32(1)], [np.int32(6)])


LOOP_UPDATES = {
    "swap": lambda a, b: al.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, b, a), [0, a, b]),
    "read after update": lambda a, b: al.while_loop(
        lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * 2 + b, a - i), [0, a, b]),
    "one value twice": lambda a, b: al.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a + b, a + b),
                                                 [0, a, b]),
    "cond reading the old value": lambda a, b: al.while_loop(
        lambda i, a, b: i < 4,
        lambda i, a, b: (i + 1, al.cond(a > b, lambda: a - b, lambda: a + i), a), [0, a, b]),
    "nested loop": lambda a, b: al.while_loop(
        lambda i, a, b: i < 2,
        lambda i, a, b: (i + 1, al.while_loop(lambda j, c: j < i + 2, lambda j, c: (j + 1, c + a), [0, a])[1], a),
        [0, a, b]),
    "unchanged": lambda a, b: al.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a, b + a), [0, a, b]),
}


@pytest.mark.parametrize("fn", list(LOOP_UPDATES.values()), ids=list(LOOP_UPDATES))
def test_loop_variables_bound_at_once_keep_their_old_value_for_later_readers(fn):
    assert_equivalent(graph_of(fn, 5, -2), [np.int32(5), np.int32(-2)], [np.int32(-1), np.int32(4)])


def test_constants_are_locals_of_the_generated_function():
    compiled = CompiledGraph(graph_of(sum_square, 10, autograph=True))
    assert lines_of(compiled.source)[1].endswith("= _constants")
    assert compiled(np.int32(10)) == (285,)


@pytest.fixture
def counting_tanh(monkeypatch):
    """Tanh replaced by a kernel (no template) that counts its calls."""
    calls = []
    original = registry.get("Tanh")

    def tanh(x):
        calls.append(1)
        return np.tanh(x)

    monkeypatch.setitem(registry._REGISTRY, "Tanh", OpDef("Tanh", kernel=tanh, infer=original.infer))
    return calls


USES_TWICE = [
    ("Square", lambda x, y: al.square(al.tanh(x)), (np.float32(0.5), np.float32(2))),
    ("Maximum scalar form", lambda x, y: al.maximum(al.tanh(x), y), (np.float32(0.5), np.float32(0.25))),
    ("Sum dtype", lambda x, y: al.reduce_sum(al.tanh(x)), (np.ones(3, np.float32), np.float32(0))),
    ("SelectV2 scalar form", lambda x, y: al.where(y > 1, al.tanh(x), y), (np.float32(0.5), np.float32(0))),
    ("while condition", lambda x, y: al.while_loop(lambda v: al.tanh(v) < 0.9, lambda v: v + 1.0, [x]),
     (np.float32(0.5), np.float32(0))),
]


@pytest.mark.parametrize("fn, args", [case[1:] for case in USES_TWICE], ids=[case[0] for case in USES_TWICE])
def test_a_nested_expression_is_evaluated_once(counting_tanh, fn, args):
    graph = graph_of(fn, *args)
    compiled = CompiledGraph(graph)
    expected = interpret(graph, *args)
    interpreted_calls = len(counting_tanh)
    counting_tanh.clear()
    found = compiled(*args)
    assert len(counting_tanh) == interpreted_calls, compiled.source
    for a, b in zip(expected, found):
        assert_identical(a, b)


# -- errors on lines that hold several ops ------------------------------------------------------
FAILING = '''
def in_an_expression(x, i):
    row = x[i]
    scaled = row * 2.0
    return al.tanh(scaled + 1.0)

def in_a_while_condition(x, i):
    total = x[0] - x[0]
    while x[i] > total:
        total += 1.0
        i = i - 1
    return total

def in_an_if_condition(x, i):
    if x[i] * 2.0 > 1.0:
        return x[0]
    return x[1]

def in_a_loop_update(x, i):
    total = x[0] - x[0]
    for j in al.range(3):
        total = total + x[i - j] * 2.0
    return total
'''


@needs_columns
@pytest.mark.parametrize("name", ["in_an_expression", "in_a_while_condition", "in_an_if_condition",
                                  "in_a_loop_update"])
def test_a_failing_op_on_a_line_of_several_names_the_op_and_its_line(name):
    fn = make_function(FAILING, name, {"al": al})
    x = np.arange(4, dtype=np.float32)
    graph = graph_of(fn, x, 0, autograph=True)
    compiled = CompiledGraph(graph)
    (outcome,) = assert_equivalent(graph, [x, np.int32(7)])
    error = outcome.error
    assert isinstance(error, InvalidArgumentError), error
    assert "StridedSlice" in str(error) and "index 7 is out of bounds" in str(error)
    lines = FAILING.splitlines()
    start = next(number for number, line in enumerate(lines) if f"def {name}" in line)
    index_line = 1 + next(number for number in range(start, len(lines)) if "[i" in lines[number])
    assert f":{index_line}." in str(error), (str(error), index_line)
    failing_line = error.__traceback__
    while failing_line.tb_next is not None:
        failing_line = failing_line.tb_next
    assert failing_line.tb_lineno == index_line
    # The failing op shares its generated line with others: the mapping used the columns.
    nested = [line for line in compiled.source.splitlines() if "[" in line and any(op in line for op in "*+<>")]
    assert nested, compiled.source


def reads_two_rows(x, i, j):
    first = x[i]
    second = x[j] * 2.0
    return second + first  # evaluated right to left, the rows would fail in the other order


def reads_two_rows_in_a_loop(x, i, j):
    def body(k, total):
        first = x[i + k]
        return k + 1, x[j - k] * 2.0 + first
    return al.while_loop(lambda k, total: k < 2, body, [0, x[0]])[1]


@pytest.mark.parametrize("fn", [reads_two_rows, reads_two_rows_in_a_loop])
def test_the_first_failing_op_is_the_interpreters(fn):
    x = np.arange(4, dtype=np.float32)
    (outcome,) = assert_equivalent(graph_of(fn, x, 0, 0), [x, np.int32(5), np.int32(9)])
    assert "index 5 is out of bounds" in str(outcome.error)


# -- releasing names ----------------------------------------------------------------------------
def peak_bytes(run) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def twice_used_intermediates(x):
    def body(i, x):
        y = x * 0.5
        z = y * y + y  # y's last use
        w = z * z  # z's last use
        return i + 1, al.tanh(w)
    return al.while_loop(lambda i, x: i < 3, body, [0, x])[1]


def twice_used_by_hand(x):
    for _ in range(3):
        y = x * np.float32(0.5)
        z = y * y + y
        del y
        w = z * z
        del z
        x = np.tanh(w, out=w)
    return x


def tanh_loop(x):
    return al.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, al.tanh(x * 0.5 + 0.25)), [0, x])[1]


def tanh_loop_by_hand(x):
    for _ in range(3):
        x = np.tanh(x * np.float32(0.5) + np.float32(0.25))
    return x


@needs_columns
@pytest.mark.parametrize("fn, by_hand", [(twice_used_intermediates, twice_used_by_hand),
                                         (tanh_loop, tanh_loop_by_hand)])
def test_a_loop_holds_no_more_memory_than_numpy_by_hand(fn, by_hand):
    x = np.full((512, 512), 0.5, np.float32)  # 1 MiB: above the size where arrays are updated in place
    compiled = CompiledGraph(graph_of(fn, x))
    expected = by_hand(x)
    assert_identical(expected, compiled(x)[0])
    generated, hand = peak_bytes(lambda: compiled(x)), peak_bytes(lambda: by_hand(x))
    assert generated <= hand + 64 * 1024, (generated / x.nbytes, hand / x.nbytes, compiled.source)


@needs_columns
def test_an_intermediate_used_twice_is_released_after_its_last_use():
    x = np.full((512, 512), 0.5, np.float32)
    compiled = CompiledGraph(graph_of(twice_used_intermediates, x))
    assert any(line.startswith("del ") for line in lines_of(compiled.source)), compiled.source
    # Held for the next iteration, y would make it 5 arrays: the input, x, y, z and w.
    assert peak_bytes(lambda: compiled(x)) <= 4 * x.nbytes + 64 * 1024, compiled.source


def read_by_a_loops_first_value_and_later(x):
    y = al.sin(x)  # an array with two readers: one nested into the loop's first line, one after the loop
    looped = al.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, al.sin(v)), [0, y * 2.0])[1]
    return looped + y


def read_by_a_branch_test_and_later(x):
    y = al.sin(x)  # two readers: the branch's test (nested into the if line), and the sum after it
    chosen = al.cond(al.reduce_sum(y * 2.0) > 0.0, lambda: x + 1.0, lambda: x - 1.0)
    return chosen + y


@pytest.mark.parametrize("fn", [read_by_a_loops_first_value_and_later, read_by_a_branch_test_and_later])
def test_a_name_read_inside_a_control_flow_nodes_first_line_lives_until_its_last_reader(fn):
    x = np.linspace(-1, 1, 5)
    graph = graph_of(fn, x)
    source = CompiledGraph(graph).source
    assert any(line.startswith("del ") for line in lines_of(source)), source  # released, but not too early
    assert_equivalent(graph, [x], [-x])


# -- loop counters as Python ints -----------------------------------------------------------------
INT32_MAX = 2**31 - 1
COUNTERS = {
    # name: (function of x (a float vector) and n (an int32 scalar), inputs, loop variables kept as Python ints)
    "range index": (lambda x, n: al.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + x[i]), [0, x[0]]),
                    (np.arange(5, dtype=np.float32), 5), 1),
    "constant bound, step 3": (lambda x, n: al.while_loop(lambda i, s: i < 10, lambda i, s: (i + 3, s * 2.0),
                                                         [n, x[0]]), (np.ones(2, np.float32), -4), 1),
    "up to int32's largest": (lambda x, n: al.while_loop(lambda i, s: i < INT32_MAX, lambda i, s: (i + 1, s + 1.0),
                                                        [n, x[0]]), (np.ones(2, np.float32), INT32_MAX - 3), 1),
    "a step that could overflow": (lambda x, n: al.while_loop(
        lambda i, s: i < INT32_MAX - 1, lambda i, s: (i + 5, s + 1.0), [n, x[0]]),
        (np.ones(2, np.float32), INT32_MAX - 11), 0),  # stops at INT32_MAX - 1: no wrap, but it could
    "wrapping around within maximum_iterations": (lambda x, n: al.while_loop(
        lambda i, s: i < INT32_MAX - 1, lambda i, s: (i + 2**30, s + 1.0), [n, x[0]], maximum_iterations=3),
        (np.ones(2, np.float32), INT32_MAX - 2**30 - 5), 0),
    "a symbolic bound and a step of 2": (lambda x, n: al.while_loop(lambda i, s: i < n, lambda i, s: (i + 2, s),
                                                                   [0, x[0]]), (np.ones(2, np.float32), 7), 0),
    "used as a number": (lambda x, n: al.while_loop(
        lambda i, s: i < n, lambda i, s: (i + 1, s + al.cast(i, al.float32)), [0, x[0]]), (np.ones(2, np.float32), 4), 0),
    "an accumulator": (lambda x, n: al.while_loop(lambda m, steps: m > 1, lambda m, steps: (m // 2, steps + 1),
                                                 [n, 0]), (np.ones(2, np.float32), 1000), 1),
    "an accumulator that wraps around": (lambda x, n: al.while_loop(
        lambda i, a: i < 5, lambda i, a: (i + 1, a + 2**30), [0, n]), (np.ones(2, np.float32), 7), 2),
    "an accumulator going down past the smallest int32": (lambda x, n: al.while_loop(
        lambda i, a: i < 3, lambda i, a: (i + 1, a + (-2**30)), [0, n]), (np.ones(2, np.float32), -2**30), 2),
    "an int64 accumulator that wraps around": (lambda x, n: al.while_loop(
        lambda i, a: i < 5, lambda i, a: (i + 1, a + 2**62), [0, al.cast(n, al.int64)]),
        (np.ones(2, np.float32), 3), 2),
    "an accumulator the test reads": (lambda x, n: al.while_loop(
        lambda a: a < 100, lambda a: a + 7, [n]), (np.ones(2, np.float32), 3), 1),  # a counter, then
    "an accumulator used as an index": (lambda x, n: al.while_loop(
        lambda i, a, s: i < 2, lambda i, a, s: (i + 1, a + 1, s + x[a]), [0, n, x[0]]), (np.ones(4, np.float32), 1),
        1),  # i is a counter; a is read as an index: not an accumulator (it may wrap)
    "int64": (lambda x, n: al.while_loop(lambda i, s: i < 2**40 + 3, lambda i, s: (i + 1, s + 1.0),
                                         [al.constant(2**40, al.int64), x[0]]), (np.ones(2, np.float32), 0), 1),
}


@pytest.mark.parametrize("fn, args, integers", list(COUNTERS.values()), ids=list(COUNTERS))
def test_loop_counters_and_accumulators_are_python_ints_only_where_they_compute_the_same(fn, args, integers):
    graph = graph_of(fn, *args)
    source = CompiledGraph(graph).source
    assert source.count("back to its numpy type") + source.count("wrapped around as") == integers, source
    (outcome,) = assert_equivalent(graph, [np.asarray(args[0]), np.int32(args[1])])
    for result, value in zip(outcome.results, graph.outputs):
        assert type(result) is value.dtype.as_numpy_dtype  # a numpy scalar again after the loop


# -- in place -----------------------------------------------------------------------------------
SHAPE = (3, 3)
CONSTANT = np.linspace(-1, 1, 9, dtype=np.float32).reshape(SHAPE)
UNARY = {
    "tanh": al.tanh, "neg": al.negative, "abs": al.abs, "exp": al.exp,
    "identity": al.identity, "transpose": al.transpose, "reshape": lambda x: al.reshape(al.reshape(x, [-1]), SHAPE),
    "slice": lambda x: x[::1], "square": al.square, "plus constant": lambda x: x + CONSTANT,
    "stop_gradient": al.stop_gradient, "reversed": lambda x: x[::-1],
}
BINARY = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y, "maximum": al.maximum,
    "matmul": lambda x, y: al.matmul(x, y) * 0.25, "concat": lambda x, y: al.concat([x, y], 0)[1:4],
}


@st.composite
def array_programs(draw):
    """Steps over two 3×3 float32 inputs: unary and binary ops, and loops over a value; some results."""
    steps, count = [], 2
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["unary", "unary", "kernel", "binary", "binary", "loop"]))
        if kind == "kernel":  # ops that call a ufunc kernel: the ones updated in place
            steps.append(("unary", draw(st.sampled_from(["tanh", "exp"])), draw(st.integers(0, count - 1))))
        elif kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, count - 1))))
        elif kind == "binary":
            operands = draw(st.tuples(st.integers(0, count - 1), st.integers(0, count - 1)))
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), operands))
        else:
            body = draw(st.lists(st.sampled_from(sorted(UNARY) + sorted(BINARY)), min_size=1, max_size=3))
            steps.append(("loop", body, (draw(st.integers(0, count - 1)), draw(st.integers(0, count - 1)))))
        count += 1
    outputs = draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=3))
    return steps, outputs


def example_programs(programs):
    def decorate(test):
        for program in programs:
            test = example(program)(test)
        return test
    return decorate


def run_program(program, x, y):
    steps, outputs = program
    values = [x, y]
    for kind, op, operand in steps:
        if kind == "unary":
            values.append(UNARY[op](values[operand]))
        elif kind == "binary":
            values.append(BINARY[op](values[operand[0]], values[operand[1]]))
        else:
            captured = values[operand[1]]

            def body(i, v, ops=op, captured=captured):
                for name in ops:
                    v = UNARY[name](v) if name in UNARY else BINARY[name](v, captured)
                return i + 1, v
            values.append(al.while_loop(lambda i, v: i < 2, body, [0, values[operand[0]]])[1])
    return tuple(values[i] for i in outputs)


# Programs where an unsafe in-place update would overwrite what it must not (kept beside the
# generated ones, which find them less often).
HAZARDS = [
    ([("unary", name, 0), ("unary", "tanh", 2)], [3]) for name in ("transpose", "reshape", "slice", "identity",
                                                                  "stop_gradient", "reversed")
] + [
    ([("unary", "tanh", 0)], [2]),  # an input
    ([("unary", "exp", 0), ("unary", "tanh", 2)], [2, 3]),  # a returned value
    ([("loop", ["tanh", "maximum"], (0, 1))], [2]),  # a loop value, and a capture
    ([("unary", "exp", 0), ("unary", "transpose", 2), ("binary", "maximum", (3, 1))], [4]),  # a view of a fresh value
    ([("binary", "mul", (0, 1)), ("binary", "maximum", (2, 2))], [3]),  # one value twice
    ([("unary", "plus constant", 0), ("unary", "tanh", 2)], [3]),
]


@needs_columns
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(array_programs())
@example_programs(HAZARDS)
def test_in_place_updates_never_touch_inputs_loop_values_results_or_views(program):
    codegen_threshold = statements.IN_PLACE_MIN_BYTES
    statements.IN_PLACE_MIN_BYTES = 0  # every fresh array qualifies, however small
    try:
        graph = al.function(lambda x, y: run_program(program, x, y), autograph=False).get_concrete_function(
            al.constant(CONSTANT), al.constant(CONSTANT)).graph
        compiled = CompiledGraph(graph)
    finally:
        statements.IN_PLACE_MIN_BYTES = codegen_threshold
    x, y = CONSTANT * 1.5, CONSTANT[::-1].copy()
    saved = x.copy(), y.copy(), CONSTANT.copy()
    expected = interpret(graph, x.copy(), y.copy())
    for _ in range(2):  # a second run would see a constant or an input that the first overwrote
        found = compiled(x, y)
        for a, b in zip(expected, found):
            assert_identical(a, b, compiled.source)
        for before, after in zip(saved, (x, y, CONSTANT)):
            assert before.tobytes() == after.tobytes(), compiled.source


@needs_columns
def test_a_fresh_intermediate_is_updated_in_place():
    x = np.full((512, 512), 0.5, np.float32)
    compiled = CompiledGraph(graph_of(tanh_loop, x))
    assert any("out=" in line for line in compiled.source.splitlines()), compiled.source
    small = CompiledGraph(graph_of(tanh_loop, x[:8, :8]))
    assert "out=" not in small.source  # below numpy's temporary-reuse size an out= costs more than it saves


def test_checked_mode_names_every_value():
    graph = graph_of(sum_square, 10, autograph=True)
    checked = CompiledGraph(graph, check=True)
    assert "while True:" in checked.source and "_check(" in checked.source
    assert checked(np.int32(10)) == (285,)


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="before 3.11 only")
def test_before_python_3_11_every_value_is_named():
    assert not codegen.NESTING


def test_float_pow_on_values_of_unknown_rank_gives_the_kernels_bits():
    """`**` on numpy float scalars is C pow, not np.power: a value of unknown rank may be a scalar."""
    from autoloop import dtypes
    from autoloop.shapes import TensorShape
    from tests.ops.ophelpers import trace_specs
    graph, _ = trace_specs(lambda t: al.norm(t, 3, axis=0), [(dtypes.float32, TensorShape(None))])
    x = np.array([-17.726156, 33.43583, 0.8184903], np.float32)  # np.power and C pow differ in the last bit
    assert_equivalent(graph, [x], [x[::-1].copy()], [np.float32(-0.0) * x])


# -- entry points -------------------------------------------------------------------------------
def two_results(x, i):
    total = x[i] + al.reduce_sum(x - x)  # inf - inf: numpy's "invalid value" error, which graphs ignore
    return total, x * 2.0


@needs_columns
@pytest.mark.parametrize("fn, results", [(two_results, 2), ("in_a_loop_update", 1)])
def test_every_entry_point_runs_the_same_code_and_maps_the_same_failure(fn, results):
    """`CompiledGraph.__call__` and the variants `runner` writes (a tuple, `finish`, `one`) share the body
    and its line maps: each gives the interpreter's values, and a failure names the same op and line."""
    fn = make_function(FAILING, fn, {"al": al}) if isinstance(fn, str) else fn
    x = np.arange(4, dtype=np.float32)
    graph = graph_of(fn, x, 0, autograph=True)
    compiled = CompiledGraph(graph)
    expected = interpret(graph, x, np.int32(1))
    entries = {"call": lambda inputs: compiled(*inputs), "tuple": compiled.runner(),
               "finish": compiled.runner(finish=lambda outputs: ("finished", outputs)),
               "one": compiled.runner(finish=lambda outputs: ("finished", outputs), one=lambda o: ("one", o))}
    for name, run in entries.items():
        found = run([x, np.int32(1)])
        if name in ("finish", "one"):
            tag, found = found
            assert tag == ("one" if name == "one" and results == 1 else "finished"), name
            found = (found,) if tag == "one" else found
        assert len(found) == results and all(np.array_equal(a, b) for a, b in zip(found, expected)), name
    errors = []
    for name, run in entries.items():
        with pytest.raises(InvalidArgumentError, match="index 7 is out of bounds") as raised:
            run([x, np.int32(7)])
        errors.append(str(raised.value))
    assert len(set(errors)) == 1, errors
    infinite = np.full(4, np.inf, np.float32)
    with np.errstate(all="raise"):  # each entry point ignores numpy's errors itself, and restores them
        for run in entries.values():
            run([infinite, np.int32(1)])
        with pytest.raises(FloatingPointError):
            infinite - infinite
