"""``value in container`` in converted code (``al__.in_``).

Python values keep Python's ``in``. A tensor container asks whether any of
its elements equals `value` (``reduce_any(equal(container, value))``, as
TensorFlow's AutoGraph does); a tensor `value` in a Python list or tuple is
compared with each item. A list built by appending in a graph loop counts
as the tensor of its elements.

    in_(2, al.constant([1, 2, 3]))     # a bool tensor: True
    in_(x, (1, 2, 3))                  # x == 1 or x == 2 or x == 3, for a tensor x
"""

from __future__ import annotations

from autoloop.ops import api
from autoloop.runtime.lists import TensorList
from autoloop.tensor import Tensor


def in_(value, container):
    """``value in container``; a boolean tensor when either side is a tensor."""
    if isinstance(container, TensorList):
        container = container.stack()
    if isinstance(container, Tensor):
        return api.reduce_any(api.equal(container, value))
    if isinstance(value, Tensor) and isinstance(container, (list, tuple)):
        if not container:
            return False
        return api.reduce_any(api.stack([api.equal(value, item) for item in container]))
    return value in container
