"""Random programs for the differential fuzzer.

`generate(seed, index)` writes one module holding a user function
``helper(x, y)`` and the function under test ``generated(a, b, xs)``, plus
the arguments to run it on: ``a`` and ``b`` small ints, ``xs`` a short list
of ints. The programs use every construct the compiler converts, nested at
random:

- ``while`` (always bounded by a counter), ``for`` over ``range(...)``
  (constant or argument bounds), over ``xs`` (a tensor in tensor runs), over a
  Python list (unrolled) and over the list ``acc``; ``if``/``elif``/``else``;
  loop ``else`` clauses; ``break``, ``continue`` and ``return`` at any depth;
- conditional expressions, ``and``/``or``/``not`` (on conditions and on ints),
  chained comparisons, ``in``/``not in`` on ``xs`` and on tuples;
- names first bound inside a loop or in one branch (``u``, ``w``), read
  anywhere (so some programs raise UnboundLocalError, as Python does);
- a list ``acc`` appended to in and after loops and branches, read through
  ``len``, ``acc[-1]``, a ``for`` loop and ``stack``;
- closures reading variables that loops change (``get = lambda: c``, a
  counter's ``peek``, ``def total(): ...``) and lambdas made in a loop;
- ``try``/``finally`` and ``try``/``except``/``else``, ``assert`` and
  ``raise`` under conditions, calls to ``helper``, builtins through a
  variable (``size = len``).

Every value is an int (or a list of ints), products are reduced modulo 17
and loops run at most four times, so plain Python and int32 tensors agree
and every program ends quickly.

    >>> program = generate(seed=1, index=0)
    >>> print(program.source)        # def helper(x, y): ... def generated(a, b, xs): ...
"""

from __future__ import annotations

import dataclasses
import random
import re

FUNCTION = "generated"
PARAMETERS = ("a", "b", "xs")


@dataclasses.dataclass
class Program:
    """One generated module and the arguments to call ``generated`` with."""

    source: str
    seed: int
    index: int
    args: tuple  # (a, b, xs)
    mixed: tuple  # positions passed as tensors in the mixed run

    @property
    def name(self) -> str:
        return f"{self.seed}-{self.index}"


@dataclasses.dataclass
class _Scope:
    """What the generator may refer to at the current point of a function."""

    ints: list  # names bound to ints here on every path
    maybe: list  # names that may be unbound here (first bound in a loop or one branch)
    loop_names: list = dataclasses.field(default_factory=list)
    in_loop: bool = False
    iterating_acc: bool = False  # inside ``for v in acc``: appending would never end
    depth: int = 0


class _FunctionWriter:
    """Writes the body of one function, statement by statement, within a budget."""

    def __init__(self, rng: random.Random, budget: int, *, has_list: bool, calls_helper: bool,
                 assigned: tuple, maybe_names: tuple, parameters: tuple, sequence: str | None):
        self.rng = rng
        self.parameters = parameters  # two int parameters, for range bounds
        self.sequence = sequence  # the list/tensor parameter, if the function has one
        self.budget = budget
        self.has_list = has_list
        self.acc_nonempty = False
        self.calls_helper = calls_helper
        self.assigned = assigned  # ints bound at the top of the function
        self.maybe_names = maybe_names
        self.counter = 0
        self.closures = []  # zero-argument callables returning ints, always bound
        self.returns = False
        self.max_depth = 3
        self.first_bound = []  # names first bound in a loop or a branch so far: readable from now on

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- expressions ----------------------------------------------------------------
    def atom(self, scope):
        rng = self.rng
        roll = rng.random()
        maybe = scope.maybe + [n for n in self.first_bound if n not in scope.maybe]
        if roll < 0.45 or not (maybe or self.has_list or self.closures):
            return rng.choice(scope.ints + scope.loop_names) if rng.random() < 0.8 else str(rng.randint(-3, 5))
        choices = []
        if maybe and rng.random() < 0.35:
            choices.append(rng.choice(maybe))
        if self.has_list:
            choices.append(rng.choice(["len(acc)", "size(acc)"]))
            if self.acc_nonempty:
                choices.append("acc[-1]")
        if self.closures:
            choices.append(f"{rng.choice(self.closures)}()")
        if self.calls_helper and scope.depth < 3:
            choices.append(f"helper({rng.choice(scope.ints)}, {rng.choice(scope.ints)})")
        return rng.choice(choices) if choices else rng.choice(scope.ints)

    def expression(self, scope, depth=0):
        rng = self.rng
        if depth >= 2 or rng.random() < 0.4:
            return self.atom(scope)
        kind = rng.choices(["arith", "product", "mod", "ternary", "logic", "neg"],
                           weights=[6, 2, 2, 2, 1, 1])[0]
        left = self.expression(scope, depth + 1)
        if kind == "arith":
            return f"({left} {rng.choice(['+', '-'])} {self.expression(scope, depth + 1)})"
        if kind == "product":
            return f"({left} * {self.expression(scope, depth + 1)} % 17)"
        if kind == "mod":
            return f"({left} {rng.choice(['%', '//'])} {rng.randint(2, 5)})"
        if kind == "ternary":
            return f"({left} if {self.condition(scope, depth + 1)} else {self.expression(scope, depth + 1)})"
        if kind == "logic":
            return f"({left} {rng.choice(['and', 'or'])} {self.expression(scope, depth + 1)})"
        return f"(-{left})" if rng.random() < 0.5 else f"abs({left})"

    def condition(self, scope, depth=0):
        rng = self.rng
        kind = rng.choices(["compare", "chain", "not", "bool", "in"], weights=[8, 2, 1, 2, 1])[0]
        if depth >= 2:
            kind = "compare"
        if kind == "compare":
            op = rng.choice(["<", "<=", ">", ">=", "==", "!="])
            return f"{self.expression(scope, depth + 1)} {op} {self.expression(scope, depth + 1)}"
        if kind == "chain":
            first, second = rng.choice(["<", "<="]), rng.choice(["<", "<="])
            return (f"{self.atom(scope)} {first} {self.expression(scope, depth + 1)} {second} "
                    f"{self.atom(scope)}")
        if kind == "not":
            return f"not ({self.condition(scope, depth + 1)})"
        if kind == "bool":
            joiner = rng.choice(["and", "or"])
            return f"({self.condition(scope, depth + 1)}) {joiner} ({self.condition(scope, depth + 1)})"
        container = rng.choice([self.sequence or "(1, 2)", "(1, 2, 3)"])
        return f"{self.atom(scope)} {rng.choice(['in', 'not in'])} {container}"

    # -- statements ---------------------------------------------------------------
    def block(self, scope, indent):
        lines = []
        count = self.rng.randint(1, 3)
        for _ in range(count):
            if self.budget <= 0 and lines:
                break
            new = self.statement(scope, indent)
            lines.extend(new)
            if new[-1].startswith(tuple(indent + jump for jump in ("break", "continue", "return "))):
                break  # anything after it would be unreachable
        return lines or [indent + "pass"]

    def statement(self, scope, indent):
        rng = self.rng
        self.budget -= 1
        kinds = {"assign": 6, "augassign": 3, "maybe_assign": 2}
        if scope.depth < self.max_depth and self.budget > 0:
            kinds.update({"if": 4, "while": 2, "for_range": 2, "for_python": 1,
                          "try_finally": 1, "try_except": 1})
            if self.sequence:
                kinds["for_xs"] = 1
        if scope.in_loop:
            kinds.update({"break": 1, "continue": 1})
        kinds.update({"return": 1 if scope.depth > 0 else 0.2, "assert": 1, "raise": 0.5})
        if self.has_list:
            kinds.update({"read_list": 1})
            if not scope.iterating_acc:
                kinds["append"] = 3
            if scope.depth < self.max_depth and not scope.iterating_acc:
                kinds["for_acc"] = 1
        if self.calls_helper:
            kinds["call"] = 1
        kind = rng.choices(list(kinds), weights=list(kinds.values()))[0]
        return getattr(self, "_" + kind)(scope, indent)

    def _assign(self, scope, indent):
        target = self.rng.choice(self.assigned)
        return [f"{indent}{target} = {self._bounded(self.expression(scope))}"]

    def _augassign(self, scope, indent):
        target = self.rng.choice(self.assigned)
        return [f"{indent}{target} {self.rng.choice(['+=', '-='])} {self._bounded(self.expression(scope))}"]

    def _bounded(self, expression):
        """`expression`, reduced when it may grow with the variables it changes (``c += c`` in a
        loop doubles c each time: int32 would overflow where Python ints do not). ``acc`` counts as
        growing: ``acc.append(v1 - 2 * acc[-1])`` in a loop doubles its last element each time."""
        growing = set(self.assigned) | set(self.maybe_names) | {"get", "total", "acc"}
        if growing & set(re.findall(r"[A-Za-z_]\w*", expression)):
            return f"({expression}) % 101"
        return expression

    def _maybe_assign(self, scope, indent):
        target = self.rng.choice(self.maybe_names)
        line = f"{indent}{target} = {self._bounded(self.expression(scope))}"
        if target not in self.first_bound:
            self.first_bound.append(target)
        return [line]

    def _inner(self, scope, **changes):
        return dataclasses.replace(scope, ints=list(scope.ints), maybe=list(scope.maybe),
                                   loop_names=list(scope.loop_names), depth=scope.depth + 1, **changes)

    def _if(self, scope, indent):
        inner = self._inner(scope)
        lines = [f"{indent}if {self.condition(scope)}:"] + self.block(inner, indent + "    ")
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            lines += [f"{indent}elif {self.condition(scope)}:"] + self.block(self._inner(scope), indent + "    ")
        if self.rng.random() < 0.5:
            lines += [f"{indent}else:"] + self.block(self._inner(scope), indent + "    ")
        return lines

    def _loop_else(self, scope, indent):
        if self.rng.random() < 0.2:
            return [f"{indent}else:"] + self.block(self._inner(scope), indent + "    ")
        return []

    def _while(self, scope, indent):
        counter = self.fresh("k")
        limit = self.rng.randint(0, 4)
        test = f"{counter} < {limit}"
        if self.rng.random() < 0.6:
            test = f"{test} and ({self.condition(scope, 1)})"
        lines = [f"{indent}{counter} = 0"]
        if self.rng.random() < 0.3:  # a closure over the loop's counter
            peek = self.fresh("peek")
            lines.append(f"{indent}{peek} = lambda: {counter}")
            self.closures.append(peek)
        inner = self._inner(scope, in_loop=True)
        inner.loop_names.append(counter)
        scope.ints.append(counter)  # bound before the loop: readable after it
        lines += [f"{indent}while {test}:", f"{indent}    {counter} += 1"]
        lines += self.block(inner, indent + "    ")
        return lines + self._loop_else(scope, indent)

    def _for(self, scope, indent, variable, iterable, **changes):
        inner = self._inner(scope, in_loop=True, **changes)
        inner.loop_names.append(variable)
        lines = [f"{indent}for {variable} in {iterable}:"] + self.block(inner, indent + "    ")
        lines += self._loop_else(scope, indent)
        scope.maybe.append(variable)  # unbound after a loop that ran no iteration
        return lines

    def _for_range(self, scope, indent):
        first, second = self.parameters
        bounds = self.rng.choice(["{n}", "{first}", "{second}", "1, {n}", "{second}, {first}", "{n}, 0, -1"])
        iterable = f"range({bounds.format(n=self.rng.randint(0, 4), first=first, second=second)})"
        return self._for(scope, indent, self.fresh("i"), iterable)

    def _for_xs(self, scope, indent):
        return self._for(scope, indent, self.fresh("v"), self.sequence)

    def _for_python(self, scope, indent):
        variable = self.fresh("p")
        lines = self._for(scope, indent, variable, self.rng.choice(["[1, 2]", "(2, 0, 1)"]))
        if self.rng.random() < 0.4:  # a lambda made in the loop reads the loop variable's last value
            made = self.fresh("made")
            lines.insert(1, f"{indent}    {made} = lambda: {variable}")
            lines.append(f"{indent}c += {made}()" if "c" in self.assigned else f"{indent}pass")
        return lines

    def _for_acc(self, scope, indent):
        return self._for(scope, indent, self.fresh("e"), "acc", iterating_acc=True)

    def _try_finally(self, scope, indent):
        lines = [f"{indent}try:"] + self.block(self._inner(scope), indent + "    ")
        return lines + [f"{indent}finally:"] + self.block(self._inner(scope), indent + "    ")

    def _try_except(self, scope, indent):
        lines = [f"{indent}try:"] + self.block(self._inner(scope), indent + "    ")
        lines += [f"{indent}except ValueError:"] + self.block(self._inner(scope), indent + "    ")
        if self.rng.random() < 0.3:
            lines += [f"{indent}else:"] + self.block(self._inner(scope), indent + "    ")
        if self.rng.random() < 0.3:
            lines += [f"{indent}finally:"] + self.block(self._inner(scope), indent + "    ")
        return lines

    def _break(self, scope, indent):
        return [f"{indent}break"]

    def _continue(self, scope, indent):
        return [f"{indent}continue"]

    def _return(self, scope, indent):
        self.returns = True
        return [f"{indent}return {self.expression(scope)}"]

    def _assert(self, scope, indent):
        return [f"{indent}assert {self.condition(scope)}, 'assertion at depth {scope.depth}'"]

    def _raise(self, scope, indent):
        return [f"{indent}if {self.condition(scope)}:",
                f"{indent}    raise ValueError('raised at depth {scope.depth}')"]

    def _append(self, scope, indent):
        line = f"{indent}acc.append({self._bounded(self.expression(scope))})"  # may not read acc[-1] yet
        if scope.depth == 0:
            self.acc_nonempty = True
        return [line]

    def _read_list(self, scope, indent):
        target = self.rng.choice(self.assigned)
        if self.acc_nonempty and self.rng.random() < 0.5:
            return [f"{indent}{target} += acc[-1]"]
        if self.acc_nonempty and self.rng.random() < 0.5:
            return [f"{indent}{target} += al.reduce_sum(al.stack(acc))"]
        return [f"{indent}{target} += len(acc)"]

    def _call(self, scope, indent):
        target = self.rng.choice(self.assigned)
        return [f"{indent}{target} = helper({self.expression(scope)}, {self.atom(scope)})"]


def _helper_source(rng):
    writer = _FunctionWriter(rng, budget=rng.randint(1, 5), has_list=False, calls_helper=False,
                             assigned=("z",), maybe_names=("q",), parameters=("x", "y"), sequence=None)
    writer.max_depth = 2
    scope = _Scope(ints=["x", "y", "z"], maybe=[])
    body = writer.block(scope, "    ")
    return "\n".join(["def helper(x, y):", "    z = x - y"] + body + ["    return (x + 2 * z) % 23"])


def _generated_source(rng):
    has_list = rng.random() < 0.6
    writer = _FunctionWriter(rng, budget=rng.randint(3, 16), has_list=has_list,
                             calls_helper=rng.random() < 0.3, assigned=("c", "d"), maybe_names=("u", "w"),
                             parameters=("a", "b"), sequence="xs")
    lines = ["def generated(a, b, xs):", "    c = 0", f"    d = {rng.choice(['a', 'b', '1'])}"]
    if has_list:
        start = rng.choice(["[]", "[b]"])
        writer.acc_nonempty = start != "[]"
        lines.append(f"    acc = {start}")
    if rng.random() < 0.3:
        lines.append("    get = lambda: c + d")
        writer.closures.append("get")
    if rng.random() < 0.15:
        lines += ["    def total():", "        return c * 2 + d"]
        writer.closures.append("total")
    if has_list and rng.random() < 0.3:
        lines.append("    size = len")
    scope = _Scope(ints=["a", "b", "c", "d"], maybe=[])
    lines += writer.block(scope, "    ")
    if not any("size(acc)" in line for line in lines) or "    size = len" not in lines:
        lines = [line.replace("size(acc)", "len(acc)") for line in lines]
    result = "(a + 2 * b + 3 * c + 5 * d) % 101"
    if has_list and not writer.returns and rng.random() < 0.5:
        lines.append(f"    return {result}, acc")
    else:
        lines.append(f"    return {result}")
    return "\n".join(lines)


def generate(seed: int, index: int) -> Program:
    """Program number `index` of the run with `seed` (the same pair gives the same program)."""
    rng = random.Random(seed * 1_000_003 + index)
    source = "\n\n".join([_helper_source(rng), _generated_source(rng)]) + "\n"
    args = (rng.randint(-2, 6), rng.randint(-2, 6), [rng.randint(-3, 5) for _ in range(rng.randint(0, 4))])
    mixed = tuple(sorted(rng.sample(range(3), rng.randint(1, 2))))
    return Program(source, seed, index, args, mixed)
