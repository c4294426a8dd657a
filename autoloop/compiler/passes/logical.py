"""``and``, ``or``, ``not``, ``in`` and chained comparisons become runtime calls.

    a and b or not c      ->  al__.or_(al__.and_(a, lambda: b), lambda: al__.not_(c))
    0 <= i < n            ->  al__.and_(0 <= i, lambda: i < n)
    x not in xs           ->  al__.not_(al__.in_(x, xs))

Later operands stay lazy (lambdas): Python values keep Python's
short-circuit semantics and return the deciding operand; tensors become
``logical_and``/``logical_or`` through a graph ``cond``. A chained
comparison is split into pairs; a middle operand that is not a name,
attribute or constant is first bound to a lambda parameter through
``al__.bind_`` so it is evaluated once.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import Pass
from autoloop.compiler.passes.conditional_expressions import safe_in_lambda

_SIMPLE = (gast.Name, gast.Attribute, gast.Constant)


def _lambda(body):
    return templates.replace_expression("lambda: body", body=body)


class LogicalExpressions(Pass):
    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if not safe_in_lambda(*node.values[1:]):
            return node
        function = "and_" if isinstance(node.op, gast.And) else "or_"
        call = gast.Call(func=self.runtime(function),
                         args=[node.values[0]] + [_lambda(v) for v in node.values[1:]], keywords=[])
        return gast.copy_location(call, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        return gast.copy_location(gast.Call(func=self.runtime("not_"), args=[node.operand],
                                            keywords=[]), node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2:
            return self._membership(node)
        middles = node.comparators[:-1]
        if not safe_in_lambda(*node.comparators):
            return node
        if not all(isinstance(m, _SIMPLE) for m in middles):
            return gast.copy_location(self._hoisted_chain(node), node)
        operands = [node.left] + node.comparators
        pairs = []
        for index, op in enumerate(node.ops):
            left = operands[index] if index == 0 else templates.clone(operands[index])
            pairs.append(self._membership(gast.Compare(left=left, ops=[op], comparators=[operands[index + 1]])))
        call = gast.Call(func=self.runtime("and_"), args=[pairs[0]] + [_lambda(p) for p in pairs[1:]],
                         keywords=[])
        return gast.copy_location(call, node)

    def _hoisted_chain(self, node):
        """``a < f(x) < b`` -> ``bind_(f(x), lambda t: and_(a < t, lambda: t < b))``.

        A middle operand that is not a name/attribute/constant is evaluated
        once, in Python's order (after the operands to its left), and only if
        the comparisons before it held.
        """
        operands = [node.left] + node.comparators

        def chain(left, index):
            right = operands[index + 1]
            if index + 1 == len(node.ops):
                return self._pair(left, node.ops[index], right)
            if isinstance(right, _SIMPLE):
                return self._and(self._pair(left, node.ops[index], right),
                                 chain(templates.clone(right), index + 1))
            name = self.ctx.namer.new("chain_operand")
            body = self._and(self._pair(left, node.ops[index], templates.name(name)),
                             chain(templates.name(name), index + 1))
            return self._bind(right, name, body)

        # The left operand first, as Python does: a name may be unbound, and its error comes before
        # any call in the middle operand runs (only a constant, or a simple middle, needs no binding).
        if isinstance(node.left, gast.Constant) or isinstance(node.comparators[0], _SIMPLE):
            return chain(node.left, 0)
        name = self.ctx.namer.new("chain_operand")
        return self._bind(node.left, name, chain(templates.name(name), 0))

    def _pair(self, left, op, right):
        return self._membership(gast.Compare(left=left, ops=[op], comparators=[right]))

    def _membership(self, compare):
        """``a in b`` -> ``al__.in_(a, b)`` (tensors: any element equal); ``not in`` negated."""
        op = compare.ops[0]
        if len(compare.ops) != 1 or not isinstance(op, (gast.In, gast.NotIn)):
            return compare
        call = gast.Call(func=self.runtime("in_"), args=[compare.left, compare.comparators[0]], keywords=[])
        if isinstance(op, gast.NotIn):
            call = gast.Call(func=self.runtime("not_"), args=[call], keywords=[])
        return gast.copy_location(call, compare)

    def _and(self, first, second):
        return gast.Call(func=self.runtime("and_"), args=[first, _lambda(second)], keywords=[])

    def _bind(self, value, name, body):
        arguments = gast.arguments(args=[gast.Name(id=name, ctx=gast.Param(), annotation=None,
                                                   type_comment=None)],
                                   posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                   defaults=[])
        return gast.Call(func=self.runtime("bind_"), args=[value, gast.Lambda(args=arguments, body=body)],
                         keywords=[])
