"""Python lists appended to inside loops.

In Python, `list_append` is ``l.append(x)``. A list that a staged loop
appends to travels through the loop as a `TensorList` (a TensorArray of the
appended values), which supports ``l[i]``, ``len(l)`` (through
``al__.len_``), ``autoloop.stack(l)`` and conversion to a tensor.
"""

from __future__ import annotations

from autoloop.runtime.values import is_graph_tensor


class TensorList:
    """A list of same-dtype tensors built by appending, backed by a TensorArray."""

    def __init__(self, array):
        self.array = array

    @classmethod
    def from_values(cls, values, dtype, element_shape):
        from autoloop.control_flow.tensor_array import TensorArray
        array = TensorArray(dtype, size=0, dynamic_size=True, element_shape=element_shape)
        result = cls(array)
        for value in values:
            result = result.append(value)
        return result

    def append(self, value) -> "TensorList":
        return TensorList(self.array.write(self.array.size(), value))

    def __getitem__(self, index):
        if isinstance(index, int) and index < 0:
            index = self.array.size() + index
        return self.array.read(index)

    def __len__(self):
        size = self.array.size()
        if is_graph_tensor(size):
            raise TypeError("len() of a list built in a graph loop is a tensor; converted code "
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
    """``target.append(element)``; returns the list (a new one for a TensorList)."""
    if isinstance(target, TensorList):
        return target.append(element)
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
