"""Python lists that graph control flow appends to.

In Python, `list_append` is ``l.append(x)``. A list that a staged loop or
branch appends to becomes a `TensorList` there and stays one afterwards: a
TensorArray of the items, which supports ``l.append(x)``, ``l[i]``,
``len(l)`` (through ``al__.len_``), ``autoloop.stack(l)``, iteration and
conversion to a tensor. Appending is O(1) (a TensorArray write).

A TensorList may be appended to only in the graph that owns it: graph
control flow hands its body a fresh TensorList for every list it carries,
so an append that reaches a list some other way (through another name or a
function call) would be lost, and raises instead.
"""

from __future__ import annotations

from autoloop.ir import context
from autoloop.runtime.locations import caller_location, describe, raise_from_user
from autoloop.runtime.values import is_graph_tensor


class TensorList:
    """A list of same-dtype tensors built by appending, backed by a TensorArray.

        >>> items = TensorList.from_values([1.0], dtype=float32, element_shape=[])
        >>> items.append(2.0); stack(items).numpy()
        array([1., 2.], dtype=float32)
    """

    def __init__(self, array, owner=None, weak=False):
        self.array = array
        self.owner = owner if owner is not None else context.current_graph()
        self.weak = weak  # every item is a Python number: an item read stands for one (Tensor._weak)

    @classmethod
    def from_values(cls, values, dtype, element_shape, weak=False) -> "TensorList":
        from autoloop.control_flow.tensor_array import TensorArray
        result = cls(TensorArray(dtype, size=0, dynamic_size=True, element_shape=element_shape), weak=weak)
        for value in values:
            result.append(value)
        return result

    def copy(self) -> "TensorList":
        """A new list with the same items, owned by the graph being built."""
        return TensorList(self.array, context.current_graph(), self.weak)

    def append(self, value) -> None:
        if context.current_graph() is not self.owner:
            location = caller_location()
            raise_from_user(TypeError(
                f"a list built by appending in graph control flow is appended to at {describe(location)} "
                f"inside graph control flow that does not carry it (it was reached through another name "
                f"or a function call), so the append would be lost; append to it by its own name in "
                f"that loop or branch, or return the list from the function that appends"), location)
        self.weak = self.weak and (isinstance(value, (bool, int, float)) or getattr(value, "_weak", False))
        try:
            self.array = self.array.write(self.array.size(), value)
        except (TypeError, ValueError) as error:
            location = caller_location()
            raise_from_user(type(error)(
                f"cannot append at {describe(location)} to a list built in graph control flow: {error}. "
                f"Such a list holds tensors of one dtype and shape (the first items decide them)"),
                location)

    def __getitem__(self, index):
        if isinstance(index, int) and index < 0:
            index = self.array.size() + index
        item = self.array.read(index)
        item._weak = self.weak
        return item

    def __len__(self):
        size = self.array.size()
        if is_graph_tensor(size):
            raise TypeError("len() of a list built in graph control flow is a tensor; converted code "
                            "uses al__.len_, or call autoloop.size(autoloop.stack(l))")
        return int(size.numpy())

    def __iter__(self):
        return (self[index] for index in range(len(self)))

    def stack(self):
        return self.array.stack()

    def __autoloop_tensor__(self):
        return self.stack()

    def __repr__(self):
        return f"<TensorList of {self.array.dtype.name}, element shape {self.array.element_shape}>"


def list_append(target, element):
    """``target.append(element)``; returns `target` (converted code rebinds the name to it).

    A `TensorArray` has no ``append``: converted code appends to one as TensorFlow's AutoGraph does, as
    ``target.write(target.size(), element)``, and the name is rebound to the array that returns."""
    from autoloop.control_flow.tensor_array import TensorArray
    if isinstance(target, TensorArray):
        return target.write(target.size(), element)
    target.append(element)
    return target


def library_call(function, args, kwargs):
    """Call library `function`; a TensorList argument is passed as its stacked tensor.

    ``autoloop.stack(l)`` of a TensorList is ``l.stack()``.
    """
    if not any(isinstance(a, TensorList) for a in args):
        return function(*args, **kwargs)
    import autoloop
    if function is getattr(autoloop, "stack", None) and isinstance(args[0], TensorList) \
            and len(args) == 1 and kwargs.get("axis", 0) == 0:
        return args[0].stack()
    args = tuple(a.stack() if isinstance(a, TensorList) else a for a in args)
    return function(*args, **kwargs)
