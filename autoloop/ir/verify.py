"""The graph verifier: re-derive every node's dtype and shape and check the wiring.

``verify(graph, infer_node)`` raises `GraphError` naming the first node that
is wrong. `infer_node(node)` (supplied by the op library, so that ir/ does
not depend on ops/) returns the ``(dtype, shape)`` of each output as the
op's rule computes it from the node's inputs. Control-flow nodes are checked
structurally here:

- ``While``: inputs are the loop values, then the cond's captures, then the
  body's, then the optional iteration limit; the cond returns one boolean
  scalar; the body returns each loop value with its dtype and a shape that
  fits the node's output shape (the shape invariant).
- ``Cond``: a boolean scalar predicate, then each branch's captures; both
  branches return the node's outputs' dtypes, with shapes that fit them.

Every sub-graph is verified the same way.
"""

from __future__ import annotations

from autoloop.dtypes import bool_


class GraphError(AssertionError):
    """A graph that breaks the IR's invariants (always a bug in autoloop)."""


def verify(graph, infer_node) -> None:
    defined = set()
    for node in graph.nodes:
        for value in node.inputs:
            if value.graph is not graph:
                _fail(node, f"input {value.name} belongs to graph {value.graph.name!r}")
            if id(value) not in defined:
                _fail(node, f"input {value.name} is used before it is defined")
        checker = _STRUCTURAL.get(node.op)
        if checker is not None:
            checker(node, infer_node)
        elif node.op != "Placeholder":
            _check_outputs(node, infer_node(node))
        defined.update(id(v) for v in node.outputs)
    for value in graph.inputs:
        if value.node.op != "Placeholder" or value.graph is not graph:
            raise GraphError(f"graph {graph.name!r}: input {value.name} is not one of its placeholders")
    for value in graph.outputs:
        if id(value) not in defined:
            raise GraphError(f"graph {graph.name!r}: output {value.name} is not computed in it")
    for outer, inner in graph.captures.items():
        if inner not in graph.inputs:
            raise GraphError(f"graph {graph.name!r}: capture of {outer.name} is not an input")


def _fail(node, problem: str):
    raise GraphError(f"node {node.name} ({node.op}) in graph {node.graph.name!r}: {problem}")


def _check_outputs(node, inferred) -> None:
    if len(inferred) != len(node.outputs):
        _fail(node, f"has {len(node.outputs)} outputs but its op gives {len(inferred)}")
    for value, (dtype, shape) in zip(node.outputs, inferred):
        if value.dtype is not dtype:
            _fail(node, f"output {value.index} is recorded as {value.dtype.name}, the op gives {dtype.name}")
        if not value.shape.is_subtype_of(shape):
            _fail(node, f"output {value.index} is recorded with shape {value.shape}, the op gives {shape}")


def _check_results(node, graph, expected, what: str) -> None:
    if len(graph.outputs) != len(expected):
        _fail(node, f"{what} returns {len(graph.outputs)} values, expected {len(expected)}")
    for result, value in zip(graph.outputs, expected):
        if result.dtype is not value.dtype or not result.shape.is_subtype_of(value.shape):
            _fail(node, f"{what} returns {result.dtype.name}{result.shape} where "
                        f"{value.dtype.name}{value.shape} is expected")


def _check_while(node, infer_node) -> None:
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    limit = 1 if node.attrs.get("has_maximum_iterations") else 0
    expected_inputs = count + len(cond.captures) + len(body.captures) + limit
    if len(node.inputs) != expected_inputs:
        _fail(node, f"has {len(node.inputs)} inputs, expected {expected_inputs}")
    for sub in (cond, body):
        if len(sub.inputs) != count + len(sub.captures):
            _fail(node, f"sub-graph {sub.name!r} takes {len(sub.inputs)} inputs, expected "
                        f"{count} loop values and {len(sub.captures)} captures")
        verify(sub, infer_node)
    if len(cond.outputs) != 1 or cond.outputs[0].dtype is not bool_ or cond.outputs[0].shape.rank not in (0, None):
        _fail(node, "cond must return one boolean scalar")
    _check_results(node, body, node.outputs, "body")
    for initial, value in zip(node.inputs[:count], node.outputs):
        if initial.dtype is not value.dtype or not initial.shape.is_subtype_of(value.shape):
            _fail(node, f"loop value {initial.name} ({initial.dtype.name}{initial.shape}) does not fit "
                        f"its invariant {value.dtype.name}{value.shape}")


def _check_cond(node, infer_node) -> None:
    true_graph, false_graph = node.attrs["true_graph"], node.attrs["false_graph"]
    pred = node.inputs[0]
    if pred.dtype is not bool_ or pred.shape.rank not in (0, None):
        _fail(node, f"predicate {pred.name} is not a boolean scalar")
    if len(node.inputs) != 1 + len(true_graph.captures) + len(false_graph.captures):
        _fail(node, "inputs do not match the branches' captures")
    for branch, what in ((true_graph, "true branch"), (false_graph, "false branch")):
        verify(branch, infer_node)
        _check_results(node, branch, node.outputs, what)


_STRUCTURAL = {"While": _check_while, "Cond": _check_cond}
