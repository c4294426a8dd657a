"""`reference_scan`: the plain-Python meaning of `autoloop.scan`, written from its docstring.

It calls the user's cond and body on every entry at every step (eager
tensors) and masks with numpy, independently of autoloop's frame loop, so
the tests compare every mode of `scan` with it. Returns numpy values:
``(ys, state, lengths)`` in the user's structures.
"""

from __future__ import annotations

import numpy as np

import autoloop as al
from autoloop import nest


def reference_scan(body, initial=None, xs=None, ys=None, cond=None, spatial_dim=None, cond_dims=None,
                   cond_before_body=True, max_seq_len=None):
    limits = []
    if xs is not None:
        limits.append(len(_numpy(nest.flatten(xs)[0])))
    limits += [int(_numpy(v)) for v in (spatial_dim, max_seq_len) if v is not None]
    limit = min(limits) if limits else None
    entries = tuple(cond_dims or ())
    state = _numpy(initial)
    if entries:
        entries = np.shape(nest.flatten(state)[0])[:len(entries)]
    active = np.ones(entries, bool)
    lengths = np.zeros(entries, np.int32)
    frames, step, previous = [], 0, None
    while limit is None or step < limit:
        x = nest.map_structure(lambda a: _numpy(a)[step], xs) if xs is not None else None
        if cond is not None and (cond_before_body or step > 0):
            seen = x if cond_before_body else previous
            active = active & _numpy(cond(_tensors(seen), _tensors(state)))
        if not active.any():
            break
        y, new_state = body(_tensors(x), _tensors(state))
        if state is not None:
            state = nest.map_structure(lambda new, old: _where(active, new, old), _numpy(new_state), state)
        if ys is not None:
            frames.append(nest.map_structure(lambda frame: _where(active, frame, 0), _numpy(y)))
        lengths += active
        previous, step = x, step + 1
    if ys is None:
        return None, state, lengths if entries else np.int32(step)
    templates = nest.flatten(ys)
    columns = [[nest.flatten(frame)[index] for frame in frames] for index in range(len(templates))]
    leaves = [np.stack(column) if column else np.zeros((0,) + _shape(t, entries), _dtype(t))
              for column, t in zip(columns, templates)]
    return nest.pack_sequence_as(ys, leaves), state, lengths if entries else np.int32(step)


def _where(active, new, old):
    new = np.asarray(new)
    mask = np.reshape(active, np.shape(active) + (1,) * (new.ndim - np.ndim(active)))
    return np.where(mask, new, np.asarray(old, new.dtype)).astype(new.dtype)


def _numpy(structure):
    if structure is None:
        return None
    return nest.map_structure(lambda v: v.numpy() if isinstance(v, al.Tensor) else np.asarray(v), structure)


def _tensors(structure):
    return None if structure is None else nest.map_structure(al.constant, structure)


def _shape(template, entries) -> tuple:
    dims = template.shape.as_list() if isinstance(template.shape, al.TensorShape) else list(np.shape(template))
    return tuple(entries) + tuple(dims[len(entries):])


def _dtype(template):
    dtype = template.dtype
    return dtype.as_numpy_dtype if hasattr(dtype, "as_numpy_dtype") else dtype
