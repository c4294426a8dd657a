"""The entry axis: how many entries a batched run has, and values moved onto it.

`Batching` is what one batched run knows besides values: its entries (a
count, or a batched value to take them from), which are active, and what an
op without a rule does. `broadcast` gives a shared value to every entry.
`Unbatchable` is what a run raises for a value it cannot put on the entry
axis at all (a per-entry ``TensorArray``, an op with no per-entry fallback).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from autoloop.ops.dispatch import convert


class Unbatchable(NotImplementedError):
    """A batched run cannot hold this value or op per entry; the message names it and the way around."""


@dataclass(frozen=True)
class Batching:
    """How one batched run goes; see the module docstring.

    `size` is the number of entries (an int or an int32 scalar) or None;
    then `like`, a batched value, holds them (inside a compacted loop the
    entries still running, a number known only when it runs). `active` is
    None (every entry) or a batched boolean: inside a branch that only some
    entries take, the entries that take it; loops there stop at once for the
    others. `fallback`: run an op without a rule once per entry (True) or
    raise (False); `warn`: say so in a warning when it does; `caller`: the
    public function a message names.
    """

    size: object = None
    like: object = None
    active: object = None
    fallback: bool = True
    warn: bool = True
    caller: str = "vectorized_map"

    def with_active(self, active) -> Batching:
        return replace(self, active=active)

    def over(self, like) -> Batching:
        """The same run over the entries of the batched value `like`."""
        return replace(self, size=None, like=like)

    def count(self):
        """The number of entries: an int, or an int32 scalar."""
        return self.size if self.size is not None else batch_size_of(self.like)

    def broadcast(self, tensor):
        """`tensor` shared by every entry, as a batched value (entries on a new axis 0)."""
        if tensor.dtype.name == "variant":
            raise Unbatchable(f"{self.caller} cannot batch a TensorArray or a list appended to in a loop "
                              f"that differs per entry; use map_fn, or return stacked tensors")
        from autoloop.ops.api import broadcast_to, cast, concat, expand_dims, reshape, shape, where, zeros_like
        if self.like is None:
            size = reshape(convert(self.size), [1])
            return broadcast_to(expand_dims(tensor, 0), concat([size, shape(tensor)], 0))
        # where(mask, t, t) with a mask computed row by row from `like`: the same values, and an op the scan's
        # entrywise analysis can follow (a shape read off `like` would hide that rows stay apart).
        first = self.like[(slice(None),) + (0,) * (self.like.shape.rank - 1)]
        mask = with_rank(cast(zeros_like(first), "bool"), 0, tensor.shape.rank)
        return where(mask, tensor, tensor)


def with_rank(tensor, rank: int, target: int):
    """A batched `tensor` of unbatched rank `rank`, with 1-sized axes after the entries up to `target`."""
    from autoloop.ops.api import expand_dims
    for _ in range(target - rank):
        tensor = expand_dims(tensor, 1)
    return tensor


def batch_size_of(tensor):
    """The entries of a batched `tensor`: its static axis 0, or an int32 scalar."""
    if tensor.shape.rank and tensor.shape[0] is not None:
        return tensor.shape[0]
    from autoloop.ops.api import shape
    return shape(tensor)[0]
