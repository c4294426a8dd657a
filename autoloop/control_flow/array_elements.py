"""`ArrayElements`: the run-time value of a TensorArray's flow, with O(1) writes.

Every TensorArray op returns a new value and leaves the one it was given as
it was, so a TensorArray can be a loop variable and eager and graph runs
agree. Copying the elements on every write would make n writes cost
O(n²); instead the versions of one array share a backing store:

- the store holds the elements and, per slot, the version that wrote it;
  its newest version is its *head*;
- a write into an unwritten slot of the head (or past its end) fills the
  store in place and makes the new version the head: O(1) amortised;
- older versions still read what they held: a slot written by a later
  version reads as unwritten to them, and their length is their own;
- a write to an older version, or over a written slot, copies the visible
  elements into a new store (what every write cost before).

Claiming the head is done under the store's lock, so one graph run from
several threads (or a TensorArray constant shared by every run of a graph)
stays correct.

    >>> empty = ArrayElements([None, None])
    >>> first = empty.write(0, "x")          # in place: `first` is the head
    >>> list(empty), list(first)
    ([None, None], ['x', None])
"""

from __future__ import annotations

import threading


class _Store:
    """Elements shared by the versions of one array; see the module docstring."""

    __slots__ = ("items", "written_by", "head", "lock")

    def __init__(self, items: list):
        self.items = items
        self.written_by = [0] * len(items)  # the version that wrote each slot
        self.head = 0
        self.lock = threading.Lock()


class ArrayElements:
    """One version of a TensorArray's elements: a sequence of values, None where unwritten.

    (Not to be confused with `autoloop.runtime.lists.TensorList`, the appended
    Python list of converted code, which is backed by a TensorArray.)
    """

    __slots__ = ("_store", "_version", "_length", "dynamic_size")

    def __init__(self, items=(), dynamic_size: bool = False):
        items = list(items)
        self._store = _Store(items)
        self._version = 0
        self._length = len(items)
        self.dynamic_size = dynamic_size

    @classmethod
    def _at(cls, store: _Store, version: int, length: int, dynamic_size: bool) -> ArrayElements:
        new = object.__new__(cls)
        new._store, new._version, new._length, new.dynamic_size = store, version, length, dynamic_size
        return new

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int):
        """The element at `index` (0 <= index < len), or None if this version has not written it."""
        if not 0 <= index < self._length:
            raise IndexError(f"index {index} is out of range for {self._length} elements")
        store = self._store
        return None if store.written_by[index] > self._version else store.items[index]

    def __iter__(self):
        return iter(self.to_list())

    def to_list(self) -> list:
        """The elements of this version, None where unwritten."""
        store = self._store
        if self._version == store.head:
            return store.items[:self._length]
        version = self._version
        return [item if written <= version else None
                for item, written in zip(store.items[:self._length], store.written_by)]

    def write(self, index: int, value) -> ArrayElements:
        """A version with `value` at `index` (grown with unwritten slots if `index` >= len)."""
        store = self._store
        with store.lock:
            if self._version == store.head and (index >= self._length or store.items[index] is None):
                if index >= self._length:
                    missing = index + 1 - self._length
                    store.items.extend([None] * missing)
                    store.written_by.extend([0] * missing)
                store.head += 1
                store.items[index] = value
                store.written_by[index] = store.head
                return ArrayElements._at(store, store.head, len(store.items), self.dynamic_size)
        items = self.to_list()
        items.extend([None] * (index + 1 - len(items)))
        items[index] = value
        return ArrayElements(items, self.dynamic_size)

    def __repr__(self):
        return f"ArrayElements({self.to_list()!r})"
