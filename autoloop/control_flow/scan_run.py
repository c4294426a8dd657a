"""The frame loop of a ``scan`` on numpy values: one implementation for every mode.

Eager `scan`, the reference interpreter and the compiled executor all call
`run_scan` with the scan's static facts (`ScanPlan`) and its cond and body
as Python functions of numpy values (the user's functions wrapped, or the
sub-graphs run or compiled). What it computes is the reference semantics of
`autoloop.control_flow.scan`; how it computes a batched scan is chosen by
`ScanPlan.compaction`:

- ``"mask"``: the body runs on every entry at every step; a finished entry
  keeps its state (``where(active, new, old)``) and gets zero frames;
- ``"compact"``: the body runs only on the rows (axis 0) that still hold an
  active entry: when entries finish, the others are gathered into a smaller
  working state and the finished rows are written back to the full state.
  The work is then proportional to the sum of the lengths, not to batch x
  longest. Rows are dropped as soon as their entries finish: gathering the
  rest costs about what masking them costs in one step, and masking would
  cost it at every later step.

Dropping rows gives the same results only when each row's results depend on
that row alone (`autoloop.control_flow.scan_entries` proves it before a
plan asks for compaction). Results agree with masking exactly, except that
a matrix product over fewer rows may round differently (BLAS blocks its
work by the number of rows).

    >>> plan = ScanPlan(has_cond=False, cond_before_body=True, entry_rank=0, compaction="mask",
    ...                 ys_dtypes=(np.dtype("int32"),), ys_frames=((),), return_tensor_arrays=False)
    >>> run_scan(plan, None, lambda x, s: (s, s + x), [np.int32(0)], [np.arange(4, dtype=np.int32)], None, None)
    [array([0, 0, 1, 3], dtype=int32), 6, 4]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autoloop.control_flow.array_elements import ArrayElements
from autoloop.errors import InvalidArgumentError


@dataclass(frozen=True)
class ScanPlan:
    """The static facts of one scan: what `run_scan` needs besides values and functions.

    `entry_rank` is the rank of cond_dims (0: one scalar condition);
    `ys_frames` holds each frame's shape template (None for an unknown dim);
    `labels` name the ys and state values in error messages.
    """

    has_cond: bool
    cond_before_body: bool
    entry_rank: int
    compaction: str
    ys_dtypes: tuple
    ys_frames: tuple
    return_tensor_arrays: bool
    ys_labels: tuple = ()
    state_labels: tuple = ()
    masked_because: str | None = None  # compaction="auto" fell back to masking: why (scan_entries)

    def ys_label(self, index: int) -> str:
        return self.ys_labels[index] if index < len(self.ys_labels) else f"ys[{index}]"

    def state_label(self, index: int) -> str:
        return self.state_labels[index] if index < len(self.state_labels) else f"state[{index}]"


def run_scan(plan: ScanPlan, cond, body, initial: list, xs: list, spatial_dim, max_seq_len) -> list:
    """The scan's outputs: stacked ys (or TensorArray elements), final state, lengths.

    ``cond(*x, *state)`` returns a boolean (of the entries' shape with
    ``plan.entry_rank``); ``body(*x, *state)`` returns the ys frames followed
    by the new state.
    """
    limit = frame_limit(xs, spatial_dim, max_seq_len)
    if plan.entry_rank:
        frames, state, lengths, entries = _run_entries(plan, cond, body, list(initial), xs, limit)
    else:
        frames, state, lengths = _run_single(plan, cond, body, list(initial), xs, limit)
        entries = ()
    return [stack_frames(plan, index, items, entries) for index, items in enumerate(frames)] + state + [lengths]


def frame_limit(xs: list, spatial_dim, max_seq_len):
    """The most frames the scan may run: the length of xs, spatial_dim, max_seq_len; None if unbounded."""
    limit = None
    lengths = {np.shape(x)[0] for x in xs}
    if len(lengths) > 1:
        raise InvalidArgumentError(f"scan: the xs tensors have different lengths on axis 0: {sorted(lengths)}")
    if lengths:
        limit = lengths.pop()
    if spatial_dim is not None:
        spatial_dim = _count(spatial_dim, "spatial_dim")
        if limit is not None and spatial_dim != limit:
            raise InvalidArgumentError(
                f"scan: spatial_dim is {spatial_dim} but xs has {limit} frames on axis 0; pass one of them, "
                f"or slice xs to spatial_dim frames")
        limit = spatial_dim
    if max_seq_len is not None:
        max_seq_len = _count(max_seq_len, "max_seq_len")
        limit = max_seq_len if limit is None else min(limit, max_seq_len)
    return limit


def _count(value, what: str) -> int:
    count = int(value)
    if count < 0:
        raise InvalidArgumentError(f"scan: {what} must be >= 0, got {count}")
    return count


# -- one scalar condition ----------------------------------------------------------------------
def _run_single(plan: ScanPlan, cond, body, state: list, xs: list, limit):
    num_ys = len(plan.ys_dtypes)
    frames = [[] for _ in range(num_ys)]
    step, previous = 0, None
    while limit is None or step < limit:
        x = [values[step] for values in xs]
        if plan.has_cond and (plan.cond_before_body or step > 0):
            # A do-while tests the frame it just ran; the test before frame 0 is skipped.
            if not scalar_test(cond(*(x if plan.cond_before_body else previous), *state)):
                break
        results = body(*x, *state)
        for items, frame in zip(frames, results[:num_ys]):
            items.append(frame)
        state = list(results[num_ys:])
        previous = x
        step += 1
    return frames, state, np.int32(step)


def scalar_test(test):
    """`test`, checked to be one boolean (a cond whose rank was unknown while tracing may not be)."""
    if np.ndim(test) != 0:
        raise InvalidArgumentError(f"scan: cond returned shape {np.shape(test)}, expected one boolean")
    return test


# -- one condition per entry -------------------------------------------------------------------
class _Entries:
    """A batched scan's state: the rows still worked on, and the full state once rows were dropped.

    `state`, `active` and `lengths` cover the working rows; `rows` says
    which rows of the full batch they are (None: all, in order), and
    `full_state`/`full_lengths` hold the rows dropped so far.
    """

    def __init__(self, plan: ScanPlan, initial: list):
        self.plan = plan
        self.rank = plan.entry_rank
        if not initial:
            raise InvalidArgumentError("scan: with cond_dims the state must hold the entries; it is empty")
        self.shape = np.shape(initial[0])[:self.rank]
        for index, value in enumerate(initial):
            if np.shape(value)[:self.rank] != self.shape:
                raise InvalidArgumentError(
                    f"scan: {plan.state_label(index)} has shape {np.shape(value)} but the entries have shape "
                    f"{self.shape}: with cond_dims every state tensor holds the entries on its leading axes")
        self.state = initial
        self.active = np.ones(self.shape, bool)
        self.lengths = np.zeros(self.shape, np.int32)
        self.rows = None
        self.full_state = self.full_lengths = None

    def test(self, result) -> None:
        result = np.asarray(result)
        if result.shape != self.active.shape:
            raise InvalidArgumentError(
                f"scan: cond returned booleans of shape {result.shape}, expected the entries' shape "
                f"{self.active.shape} (cond_dims)")
        self.active &= result

    def shrink(self, count: int) -> bool:
        """With compaction, drop the rows whose entries all finished; whether every entry left is active."""
        if self.plan.compaction == "mask":
            return False
        keep = self.active if self.rank == 1 else self.active.reshape(len(self.active), -1).any(axis=1)
        kept = count if self.rank == 1 else int(np.count_nonzero(keep))
        if kept == len(keep):
            return False
        if self.rows is None:  # copies: the given state arrays may be the caller's, or frames
            self.rows = np.arange(len(keep))
            self.full_state = [np.array(value) for value in self.state]
            self.full_lengths = self.lengths.copy()
        else:
            done = self.rows[~keep]
            for full, value in zip(self.full_state, self.state):
                full[done] = value[~keep]
            self.full_lengths[done] = self.lengths[~keep]
        self.rows = self.rows[keep]
        self.state = [value[keep] for value in self.state]
        self.active, self.lengths = self.active[keep], self.lengths[keep]
        return self.rank == 1

    def rows_of(self, x: list) -> list:
        """The frames of xs (entries on axis 0) for the working rows."""
        return x if self.rows is None else [values[self.rows] for values in x]

    def check_frames(self, x: list) -> None:
        for values in x:
            if np.shape(values)[:self.rank] != self.shape:
                raise InvalidArgumentError(
                    f"scan: with cond_dims a frame of xs holds the entries {self.shape} on its leading axes "
                    f"(xs of shape [frames, *entries, ...]), got a frame of shape {np.shape(values)}")

    def step(self, body, num_ys: int, everyone: bool, x: list) -> list:
        """Run the body on the working rows (`x`: their frames of xs); the ys frames over every entry."""
        results = body(*x, *self.state)
        frames, new = list(results[:num_ys]), list(results[num_ys:])
        for index, (old, value) in enumerate(zip(self.state, new)):
            if value.shape != old.shape:
                raise InvalidArgumentError(
                    f"scan: the body changed the shape of {self.plan.state_label(index)} from {old.shape} "
                    f"to {np.shape(value)}; with cond_dims the state keeps the entries on axis 0")
            if not everyone:
                new[index] = np.where(self._mask(value.ndim), value, old)
        self.state = new
        self.lengths += self.active
        return [self._full_frame(index, frame, everyone) for index, frame in enumerate(frames)]

    def _mask(self, ndim: int):
        return self.active.reshape(self.active.shape + (1,) * (ndim - self.rank))

    def _full_frame(self, index: int, frame, everyone: bool):
        frame = np.asarray(frame)
        if frame.shape[:self.rank] != self.active.shape:
            raise InvalidArgumentError(
                f"scan: the body returned a frame of shape {frame.shape} for {self.plan.ys_label(index)}; "
                f"with cond_dims a frame holds the entries {self.active.shape} on its leading axes")
        if not everyone:
            frame = np.where(self._mask(frame.ndim), frame, np.zeros((), frame.dtype))
        return frame if self.rows is None else RowsFrame(frame, self.rows, len(self.full_lengths))

    def results(self):
        """The final state and lengths over the full batch."""
        if self.rows is None:
            return self.state, self.lengths
        for full, value in zip(self.full_state, self.state):
            full[self.rows] = value
        self.full_lengths[self.rows] = self.lengths
        return self.full_state, self.full_lengths


def _run_entries(plan: ScanPlan, cond, body, initial: list, xs: list, limit):
    entries = _Entries(plan, initial)
    num_ys = len(plan.ys_dtypes)
    frames = [[] for _ in range(num_ys)]
    step, previous = 0, []
    while limit is None or step < limit:
        x = [values[step] for values in xs]  # entries on axis 0 (xs: [frames, entries, ...])
        if step == 0:
            entries.check_frames(x)
        if plan.has_cond and (plan.cond_before_body or step > 0):
            # A do-while tests the frame it just ran (rows have not changed since).
            entries.test(cond(*entries.rows_of(x if plan.cond_before_body else previous), *entries.state))
        count = int(np.count_nonzero(entries.active))
        if count == 0:
            break
        everyone = count == entries.active.size or entries.shrink(count)
        for items, frame in zip(frames, entries.step(body, num_ys, everyone, entries.rows_of(x))):
            items.append(frame)
        previous = x
        step += 1
    state, lengths = entries.results()
    _warn_if_long_tailed(plan, lengths, step)
    return frames, state, lengths, entries.shape


class MaskedScanWarning(UserWarning):
    """A batched scan masked finished entries on a long-tailed batch: most of its work was wasted."""


def _warn_if_long_tailed(plan: ScanPlan, lengths, steps: int) -> None:
    """Warn (once per place, as warnings do) when masking wasted over half the work: entries x steps against
    the frames the entries ran."""
    if plan.masked_because is None or lengths.size < 4 or 2 * int(lengths.sum()) >= lengths.size * steps:
        return
    import warnings
    warnings.warn(
        f"scan with cond_dims ran {lengths.size} entries masked for {steps} steps, but they needed only "
        f"{int(lengths.sum())} frames in all: it could not drop finished entries because {plan.masked_because}. "
        f"See `autoloop run --explain`", MaskedScanWarning, stacklevel=2)


# -- results -------------------------------------------------------------------------------------
class RowsFrame:
    """A frame of a compacted scan: `frame` holds rows `rows` of the full frame of `entries` rows, zeros
    elsewhere. Written into the stacked ys once, at the end (a full frame per step would cost batch x steps)."""

    __slots__ = ("frame", "rows", "entries")

    def __init__(self, frame, rows, entries: int):
        self.frame, self.rows, self.entries = frame, rows, entries

    def full(self):
        full = np.zeros((self.entries,) + self.frame.shape[1:], self.frame.dtype)
        full[self.rows] = self.frame
        return full


def stack_frames(plan: ScanPlan, index: int, items: list, entries: tuple = ()):
    """One ys output: its frames stacked on a new axis 0, or as TensorArray elements."""
    label, template = plan.ys_label(index), plan.ys_frames[index]
    if plan.return_tensor_arrays:
        return ArrayElements([item.full() if isinstance(item, RowsFrame) else item for item in items],
                             dynamic_size=True)
    if not items:
        dims = tuple(entries) + tuple(template[len(entries):])
        if any(d is None for d in dims):
            raise InvalidArgumentError(
                f"scan ran no frames, and the frame shape of {label} is not fully known ({_shape(template)}); "
                f"give its template a full shape")
        return np.zeros((0,) + dims, plan.ys_dtypes[index])
    try:
        stacked = _stacked_rows(items) if isinstance(items[-1], RowsFrame) else np.array(items)
    except ValueError:
        shapes = sorted({(item.entries,) + item.frame.shape[1:] if isinstance(item, RowsFrame) else np.shape(item)
                         for item in items})
        raise InvalidArgumentError(f"scan: the frames of {label} have different shapes {shapes}") from None
    frame = stacked.shape[1:]
    if len(frame) != len(template) or any(t is not None and t != d for t, d in zip(template, frame)):
        raise InvalidArgumentError(
            f"scan: the body returned frames of shape {_shape(frame)} for {label}, whose template is "
            f"{_shape(template)}")
    return stacked


def _stacked_rows(items: list):
    """Frames, some of them `RowsFrame`s (the last one is), on a new axis 0; a ValueError if shapes differ."""
    last = items[-1]
    stacked = np.zeros((len(items), last.entries) + last.frame.shape[1:], last.frame.dtype)
    for step, item in enumerate(items):
        if isinstance(item, RowsFrame):
            if item.frame.shape[1:] != last.frame.shape[1:]:
                raise ValueError("frames of different shapes")
            stacked[step, item.rows] = item.frame
        else:
            if np.shape(item) != stacked.shape[1:]:
                raise ValueError("frames of different shapes")
            stacked[step] = item
    return stacked


def _shape(dims) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
