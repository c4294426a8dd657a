"""What one conversion knows besides the tree: where the source came from,
which names are taken, and the side tables that passes hand to later passes.

Passes never hang attributes on AST nodes; anything a later pass must know
about a node lives in a dict here, keyed by that node.
"""

from __future__ import annotations

import dataclasses

import gast

RUNTIME_NAME = "al__"  # how converted code refers to autoloop.runtime


@dataclasses.dataclass
class SourceInfo:
    """Where the parsed function lives: file, and how to map parsed lines to it."""

    filename: str
    line_offset: int  # user line = parsed line + line_offset
    function_name: str

    def user_line(self, node) -> int:
        return getattr(node, "lineno", 1) + self.line_offset


class Namer:
    """Hands out identifiers that collide with no name in the user's function.

    >>> namer = Namer({"break_"}); namer.new("break_")
    'break_1'
    """

    def __init__(self, taken):
        self.taken = set(taken)

    def new(self, base: str) -> str:
        name, index = base, 0
        while name in self.taken:
            index += 1
            name = f"{base}{index}"
        self.taken.add(name)
        return name


def names_in(tree) -> set[str]:
    """Every identifier used anywhere in `tree` (names, parameters, defs)."""
    taken = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Name):
            taken.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            taken.add(node.name)
        elif isinstance(node, gast.alias):
            taken.add((node.asname or node.name).split(".")[0])
    return taken


@dataclasses.dataclass
class ConversionContext:
    """State of one conversion, shared by the passes of the pipeline.

    Side tables (all keyed by AST node):
    - `extra_tests`: `for` loop -> expression that must hold before each
      iteration (``not break_``), written by the breaks pass.
    - `unsupported`: loop or `if` -> ``(relation, construct, line)`` for a
      construct graph control flow cannot express
      (``("contains", "a try statement", 7)``); the runtime raises
      NotImplementedError if the statement is staged.
    - `appended_lists`: loop -> names of lists appended to in its body.
    - `exempt_reads`: generated names whose reads are never checked for
      definedness (the return value, read through `return_value`; the
      jump flags).
    - `guards`: an ``if`` the flag passes made -> ``(jump, lines)`` or
      ``("return", lines, retval)``: it runs what follows the ``return``,
      ``break`` or ``continue`` statements at the user's `lines` only when
      none of them ran (``if not do_return:``). The runtime names the jump
      in its messages instead of an ``if`` the user never wrote, and
      ``--explain`` does not list it.
    """

    source: SourceInfo
    namer: Namer
    runtime_name: str = RUNTIME_NAME
    extra_tests: dict = dataclasses.field(default_factory=dict)
    unsupported: dict = dataclasses.field(default_factory=dict)
    appended_lists: dict = dataclasses.field(default_factory=dict)
    exempt_reads: set = dataclasses.field(default_factory=set)
    guards: dict = dataclasses.field(default_factory=dict)
    return_breaks: set = dataclasses.field(default_factory=set)  # the breaks a return in a loop became
    globals_of: dict = dataclasses.field(default_factory=dict)  # FunctionDef -> declared global/nonlocal names
    captured: dict = dataclasses.field(default_factory=dict)  # FunctionDef -> names its closures capture
    exception_visible: dict = dataclasses.field(default_factory=dict)  # FunctionDef -> names set in try's control flow
    user_locals: dict = dataclasses.field(default_factory=dict)  # FunctionDef -> names the user's code binds
    loop_options: dict = dataclasses.field(default_factory=dict)  # loop -> its set_loop_options statement
    jump_flags: dict = dataclasses.field(default_factory=dict)  # do_return/break_/continue_ -> retval_ or None
    # generated name -> (what it stands for, the user's lines): ``("return value", (4, 6))`` for the
    # ``retval_`` of the returns at lines 4 and 6, ``("break", (7,))`` for a break flag. Registered
    # with the emitted code, so that messages speak of what the user wrote (`Statement.subject`).
    generated: dict = dataclasses.field(default_factory=dict)
    finally_flags: dict = dataclasses.field(default_factory=dict)  # Try -> its finally_jumped flag
    entry_undefined: dict = dataclasses.field(default_factory=dict)  # FunctionDef -> [(statement, names)]
    undefined_inits: dict = dataclasses.field(default_factory=dict)  # FunctionDef -> {statement: names}
    top_level_reads: dict = dataclasses.field(default_factory=dict)  # FunctionDef -> checked names it reads
    resolve: object = None  # name -> (found, object), for the calls pass (None: all calls dynamic)
    is_library: object = staticmethod(lambda target: False)  # object -> call it as it is?
    has_class_cell: bool = False  # the function uses zero-argument super()
    root: object = None  # the converted FunctionDef (functions nested in it are converted along)
    has_nested_scopes: bool = True  # lambdas, nested functions or comprehensions (closures possible)
    has_try: bool = False  # the function has a try statement
    has_finally: bool = False  # some try statement has a finally block

    _reserved: dict = dataclasses.field(default_factory=dict)

    def user_line(self, node) -> int:
        return self.source.user_line(node)

    def reserved(self, base: str) -> str:
        """A name for generated helpers (``loop_body``), the same one on every call.

        Each helper is defined right before its single use, so reusing the
        name in sibling or nested statements is safe; it only has to avoid
        the user's names.
        """
        if base not in self._reserved:
            self._reserved[base] = self.namer.new(base)
        return self._reserved[base]
