"""`scan`'s arguments: each checked, with errors that name it, and flattened for tracing.

    >>> entry_shape([None]), entry_shape(None)
    (TensorShape([None]), TensorShape([]))
    >>> templates([TensorSpec([2], float32), constant(0)])[2]
    [(autoloop.float32, TensorShape([2])), (autoloop.int32, TensorShape([]))]
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes, nest
from autoloop.control_flow.loop_vars import LoopVars
from autoloop.ops.dispatch import constant_value, convert
from autoloop.shapes import TensorShape, as_shape
from autoloop.tensor import Tensor


def check_callable(fn, what: str) -> None:
    if not callable(fn):
        raise TypeError(f"scan: {what} must be callable, got {type(fn).__name__} {fn!r}")


def dims_text(dims) -> str:
    try:
        return str([d if not isinstance(d, Tensor) else constant_value(d) for d in dims])
    except TypeError:
        return repr(dims)


def entry_shape(cond_dims) -> TensorShape:
    """cond_dims as a TensorShape (rank 0 without); its dims may be ints, None or scalar int tensors."""
    if cond_dims is None:
        return TensorShape([])
    if isinstance(cond_dims, TensorShape):
        dims = cond_dims.dims
        if dims is None:
            raise ValueError("scan: cond_dims must have a known rank, got TensorShape(None)")
    elif isinstance(cond_dims, list | tuple):
        dims = []
        for dim in cond_dims:
            if isinstance(dim, Tensor):
                known = constant_value(dim)
                dims.append(None if known is None or np.ndim(known) else int(known))
            elif dim is None or (isinstance(dim, int | np.integer) and not isinstance(dim, bool) and dim >= 0):
                dims.append(None if dim is None else int(dim))
            else:
                raise TypeError(f"scan: cond_dims entries must be sizes (ints >= 0, None or scalar int tensors), "
                                f"got {dim!r}")
    else:
        raise TypeError(f"scan: cond_dims must be a list of sizes such as [batch], got {cond_dims!r}")
    return TensorShape(dims)


def merge_entries(entries: TensorShape, shape: TensorShape, rank: int, what: str) -> TensorShape:
    if shape.rank is None or shape.rank < rank or not shape[:rank].is_compatible_with(entries):
        raise ValueError(f"scan: with cond_dims={entries.as_list()}, {what} must hold the entries on its leading "
                         f"axes, but its shape is {shape}; entry b is index b on axis 0 of every state tensor")
    return entries.merge_with(shape[:rank])


def frame_count(value, what: str):
    """spatial_dim / max_seq_len as a scalar int tensor (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer | Tensor | np.ndarray):
        raise TypeError(f"scan: {what} must be an int or a scalar integer tensor, got {value!r}")
    if isinstance(value, int | np.integer) and value < 0:
        raise ValueError(f"scan: {what} must be >= 0, got {value}")
    tensor = convert(value, dtypes.int32 if isinstance(value, int) else None)
    if tensor.dtype not in (dtypes.int32, dtypes.int64) or tensor.shape.rank not in (0, None):
        raise TypeError(f"scan: {what} must be an int or a scalar integer tensor, got {tensor.dtype.name} "
                        f"tensor of shape {tensor.shape}")
    return tensor


def frames_of(xs):
    """xs flattened; each leaf a tensor whose axis 0 holds the frames."""
    if xs is None:
        return None
    frames = LoopVars(xs, None, root="xs")
    lengths = set()
    for label, leaf in zip(frames.labels, frames.leaves):
        if not isinstance(leaf, Tensor):
            raise TypeError(f"scan: xs must hold tensors, but {label} is a {type(leaf).__name__}")
        if leaf.shape.rank == 0:
            raise ValueError(f"scan: {label} is a scalar; xs tensors hold the frames on axis 0")
        if leaf.shape.rank is not None and leaf.shape[0] is not None:
            lengths.add(leaf.shape[0])
    if len(lengths) > 1:
        raise ValueError(f"scan: the xs tensors have different lengths on axis 0: {sorted(lengths)}")
    return frames


def templates(ys):
    """The ys structure, a label and a ``(dtype, shape)`` per leaf, from TensorSpecs or example tensors."""
    if ys is None:
        return None, [], []
    labels, templates = [], []
    for path, leaf in nest.flatten_with_paths(ys):
        labels.append("ys" + "".join(f"[{key!r}]" for key in path))
        templates.append(template_of(leaf, labels[-1]))
    return ys, labels, templates


def template_of(leaf, label: str):
    if leaf is None:
        raise TypeError(f"scan: {label} is None; a ys template is a TensorSpec or an example tensor")
    if isinstance(leaf, Tensor) or (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
        dtype = dtypes.as_dtype(leaf.dtype)
        shape = as_shape(leaf.shape if not isinstance(leaf, np.ndarray | np.generic) else np.shape(leaf))
    elif isinstance(leaf, bool | int | float):
        tensor = convert(leaf)
        dtype, shape = tensor.dtype, tensor.shape
    else:
        raise TypeError(f"scan: {label} is a {type(leaf).__name__}; a ys template is a TensorSpec or an "
                        f"example tensor")
    if shape.rank is None:
        raise ValueError(f"scan: the template {label} needs a known rank, got {shape}")
    return dtype, shape


def frame_shape(shape: TensorShape, template: TensorShape) -> TensorShape:
    return template.merge_with(shape) if template.is_compatible_with(shape) else template


def describe(value) -> str:
    if isinstance(value, Tensor):
        return f"a {value.dtype.name} tensor of shape {value.shape}"
    if nest.is_nested(value):
        return repr(nest.map_structure_up_to_leaves(value))
    return f"{type(value).__name__} {value!r}"
