"""A walk through autoloop: one function from Python source to a number.

    python docs/walkthrough.py

Each step shows what it made and checks it; ``tests/test_walkthrough.py``
runs this file, so the walkthrough cannot drift from the code.
"""

import gast
import numpy as np

import autoloop as al
from autoloop.compiler import parse
from autoloop.compiler.analysis import analyze
from autoloop.execute import CompiledGraph
from autoloop.execute.interpreter import interpret
from autoloop.ir import rewrite
from autoloop.ops.dispatch import constant_node, on_values, verify


def sum_square(n):
    i, result = al.constant(0), al.constant(0)
    while i < n:
        result += i * i
        i += 1
    return result


def step(title):
    print(f"\n== {title} " + "=" * (60 - len(title)))


# 1. Parse. The compiler reads the function's source (via linecache, so
#    lambdas, nested functions and notebook cells work too) into a gast tree.
step("1. parse")
parsed = parse.parse_function(sum_square)
loop = next(node for node in gast.walk(parsed.node) if isinstance(node, gast.While))
print(f"found a while loop at line {parsed.source.user_line(loop)} of {parsed.source.filename}")

# 2. Analyse. Read-only passes compute, per statement, the names it modifies,
#    which names are live (read later), and which are defined. The loop
#    variables are the names the body modifies that are read afterwards or by
#    the next iteration: here `i` and `result`, not `n`.
step("2. analyse")
facts = analyze(parsed.node).of(loop)
modified = {str(name) for name in facts.modified(loop)}
live = {str(name) for name in facts.live_after(loop) | facts.live_at_start(loop, "body")} & {"i", "n", "result"}
loop_vars = sorted(modified & live)
print(f"modified in the body: {sorted(modified)}; live: {sorted(live)} -> loop variables {loop_vars}")
assert loop_vars == ["i", "result"]

# 3. Convert. Passes rewrite the loop into a functional call: the state
#    travels as parameters and return values, never through closures.
step("3. convert")
converted = al.to_code(sum_square)
print(converted)
assert "al__.while_stmt(loop_cond, loop_body, (i, result), ('i', 'result'))" in converted

# 4. Trace. @function runs the converted code with symbolic tensors; the
#    runtime sees that `i < n` is a tensor and stages one While node whose
#    cond and body are sub-graphs.
step("4. trace")
fn = al.function(sum_square)
concrete = fn.get_concrete_function(al.constant(10))
print(concrete.graph)
assert [node.op for node in concrete.graph.nodes].count("While") == 1

# 5. Execute. The executor compiles the graph once into Python source in which
#    the While is a plain `while` loop over numpy values.
step("5. execute")
print(concrete.compiled.source)
result = fn(al.constant(10))
print(f"sum_square(10) = {result.numpy()}")
assert result.numpy() == sum(k * k for k in range(10)) == 285

# 6. Rewrite. Transformations (gradients, lowering, other backends) edit
#    graphs with autoloop.ir.rewrite. Here a copy of the traced graph gets a
#    third loop variable that counts iterations, built in the loop body by a
#    callback; the verifier checks the result, and it runs on the reference
#    interpreter (node by node through the op registry, no code generated)
#    and on the compiled executor, which must agree.
step("6. rewrite")
graph = rewrite.clone(concrete.graph)
loop = next(node for node in graph.nodes if node.op == "While")
zero = constant_node(graph, np.int32(0))
count = rewrite.add_loop_var(loop, zero, on_values(lambda count: count + 1), name="count")
graph.outputs.append(count)
verify(graph)
print(graph)
by_interpreter = interpret(graph, np.int32(10))
by_executor = CompiledGraph(graph)(np.int32(10))
print(f"interpreter: {by_interpreter}, compiled executor: {by_executor}")
assert [int(v) for v in by_interpreter] == [int(v) for v in by_executor] == [285, 10]

# 7. Differentiate. A gradient is one more graph transformation: sum_square
#    over floats differentiated with respect to a weight `w` on each term.
#    The forward While gets an iteration counter and a stack of the values
#    its gradient reads (here `i`, pushed every iteration); a second
#    While runs as many times backwards, popping them. The backward graph
#    runs on both executors like any other.
step("7. differentiate")


def weighted_sum_square(n, w):
    i, result = al.constant(0.0, al.float64), al.constant(0.0, al.float64)
    while i < n:
        result += w * i * i
        i += 1.0
    return result


gradient = al.function(lambda n, w: al.gradients(weighted_sum_square(n, w), [w]))
backward = gradient.get_concrete_function(np.array(10.0), np.array(2.0)).graph
loops = [node for node in backward.nodes if node.op == "While"]
saved = loops[0].attrs["_gradient"].saved
print(f"{len(loops)} loops; the forward one saves {len(saved)} value per iteration: {saved}")
(d_w,) = gradient(np.array(10.0), np.array(2.0))
by_interpreter = interpret(backward, np.array(10.0), np.array(2.0))
print(f"d/dw = {d_w.numpy()} (interpreter: {by_interpreter[0]})")
assert len(loops) == 2 and len(saved) == 1 and d_w.numpy() == by_interpreter[0] == 285.0
