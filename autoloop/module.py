"""`Module`: a named container of variables and other modules (TensorFlow's ``tf.Module``).

A module finds what it owns by looking through its attributes (in sorted
order of their names), into lists, tuples and dicts (dicts in sorted key
order, as `autoloop.nest` flattens them), and recursively into the modules
it holds, each object once:

    class Dense(Module):
        def __init__(self, size_in, size_out, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.w = Variable(np.ones([size_in, size_out], np.float32), name="w")
                self.b = Variable(np.zeros([size_out], np.float32), name="b")

        @function
        def __call__(self, x):                      # traced once per instance (and signature)
            return x @ self.w + self.b

    class Model(Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(2, 3, name="first"), Dense(3, 1, name="second")]

    Model().trainable_variables   # first/b, first/w, second/b, second/w

A module's own attributes come first, then each sub-module's, depth first
in the order they were found.
"""

from __future__ import annotations

import re

from autoloop.nest import is_namedtuple
from autoloop.ops.graph_building import name_scope as graph_name_scope
from autoloop.variables import Variable, variable_name_scope

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Module:
    """Base class of models and layers: `variables`, `trainable_variables`, `submodules`, `name_scope`."""

    def __init__(self, name: str | None = None):
        if name is None:
            name = _snake_case(type(self).__name__)
        elif not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"Module name {name!r} is not a valid Python identifier; a module's name is letters, "
                             f"digits and '_', not starting with a digit")
        self._name = name
        self._scope_name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> ModuleScope:
        """A block (``with self.name_scope:``) naming variables and graph nodes ``<module name>/...``."""
        return ModuleScope(self._scope_name)

    @property
    def variables(self) -> tuple[Variable, ...]:
        """Every `Variable` of this module and its sub-modules (see the module docstring for the order)."""
        return tuple(_owned(self, lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self) -> tuple[Variable, ...]:
        """The variables made with ``trainable=True``."""
        return tuple(_owned(self, lambda v: isinstance(v, Variable) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(_owned(self, lambda v: isinstance(v, Variable) and not v.trainable))

    @property
    def submodules(self) -> tuple[Module, ...]:
        """Every `Module` this one holds, at any depth (itself excluded)."""
        return tuple(_owned(self, lambda v: isinstance(v, Module)))

    @classmethod
    def with_name_scope(cls, method):
        """Decorate `method` to run inside its module's `name_scope`."""
        def scoped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        scoped.__name__, scoped.__doc__, scoped.__wrapped__ = method.__name__, method.__doc__, method
        return scoped


class ModuleScope:
    """``with module.name_scope:``: variables made inside are named ``name/...``, and so are graph nodes."""

    def __init__(self, name: str):
        self.name = f"{name}/"
        self._blocks: list = []

    def __enter__(self):
        variables = variable_name_scope(self.name[:-1])
        nodes = graph_name_scope(self.name[:-1])
        variables.__enter__()
        nodes.__enter__()
        self._blocks.append((variables, nodes))
        return self.name

    def __exit__(self, *exc_info):
        variables, nodes = self._blocks.pop()
        nodes.__exit__(*exc_info)
        variables.__exit__(*exc_info)
        return False


def _owned(module: Module, wanted) -> list:
    """The objects `wanted` accepts among what `module` holds; see the module docstring."""
    seen = {id(module)}
    found: list = []
    _search(module, wanted, seen, found, [id(module)])
    return found


def _search(module, wanted, seen: set, found: list, path: list) -> None:
    inner = []
    attributes = vars(module)
    for key in sorted(attributes):
        for leaf in _leaves(attributes[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if wanted(leaf):
                found.append(leaf)
            if isinstance(leaf, Module) and id(leaf) not in path:
                inner.append(leaf)
    for submodule in inner:
        path.append(id(submodule))
        _search(submodule, wanted, seen, found, path)
        path.pop()


def _leaves(value):
    """`value`'s leaves through lists, tuples (named too) and dicts (keys sorted)."""
    if isinstance(value, dict):
        for key in sorted(value, key=_sort_key):
            yield from _leaves(value[key])
    elif isinstance(value, list | tuple) or is_namedtuple(value):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _sort_key(key):
    return (type(key).__name__, key) if isinstance(key, str | int | float) else (type(key).__name__, id(key))


def _snake_case(name: str) -> str:
    """``"MyDense"`` -> ``"my_dense"`` (TensorFlow's default module name)."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
