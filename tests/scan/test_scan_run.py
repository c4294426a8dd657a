"""The frame loop (`autoloop.control_flow.scan_run`) on numpy values: how many rows each step works on.

With compaction the body runs on the active rows only, so the rows it sees
add up to the sum of the lengths, never to batch x longest; the results
are those of masking.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from autoloop.control_flow.array_elements import ArrayElements
from autoloop.control_flow.scan_run import ScanPlan, frame_limit, run_scan
from autoloop.errors import InvalidArgumentError


def plan(compaction="mask", entry_rank=1, has_cond=True, cond_before_body=True, frames=((None, 2),), arrays=False):
    return ScanPlan(has_cond=has_cond, cond_before_body=cond_before_body, entry_rank=entry_rank,
                    compaction=compaction, ys_dtypes=tuple(np.dtype("float64") for _ in frames), ys_frames=frames,
                    return_tensor_arrays=arrays)


def run_counting(compaction, lengths, cond_before_body=True):
    """A batched scan whose body records the number of rows it gets."""
    rows_seen = []
    lengths = np.asarray(lengths, np.int32)

    def cond(h, step, limit):
        return step < limit

    def body(h, step, limit):
        rows_seen.append(len(h))
        h = h * 2 + 1
        return h, h, step + 1, limit

    initial = [np.ones((len(lengths), 2)), np.zeros(len(lengths), np.int32), lengths]
    outputs = run_scan(plan(compaction, cond_before_body=cond_before_body), cond, body, initial, [], None, None)
    return outputs, rows_seen


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(0, 20), min_size=1, max_size=12), do_while=st.booleans())
def test_compaction_works_on_the_active_rows_only(lengths, do_while):
    masked, mask_rows = run_counting("mask", lengths, not do_while)
    compacted, compacted_rows = run_counting("compact", lengths, not do_while)
    ran = [max(n, 1) if do_while else n for n in lengths]
    assert mask_rows == [len(lengths)] * max(ran)
    assert sum(compacted_rows) == sum(ran)
    for a, b in zip(masked, compacted):
        np.testing.assert_array_equal(a, b)
    assert masked[-1].tolist() == ran


def test_rows_are_dropped_as_their_entries_finish():
    _, rows = run_counting("compact", [1, 2, 2, 4, 0, 4, 7, 8])
    assert rows == [7, 6, 4, 4, 2, 2, 2, 1]


def test_the_state_given_is_never_written():
    initial = [np.ones((3, 2)), np.zeros(3, np.int32), np.array([1, 3, 2], np.int32)]
    for array in initial:
        array.setflags(write=False)  # as graph constants are
    run_scan(plan("compact"), lambda h, s, n: s < n, lambda h, s, n: (h, h + 1, s + 1, n), initial, [], None, None)


def test_frames_that_alias_the_state_keep_their_values():
    def body(h, step, limit):
        return h, h + 1, step + 1, limit  # the frame is the state itself

    initial = [np.zeros((3, 2)), np.zeros(3, np.int32), np.array([1, 4, 2], np.int32)]
    frames, h, _, _, lengths = run_scan(plan("compact"), lambda h, s, n: s < n, body, initial, [], None, None)
    assert frames[:, :, 0].tolist() == [[0, 0, 0], [0, 1, 1], [0, 2, 0], [0, 3, 0]]
    assert h[:, 0].tolist() == [1, 4, 2] and lengths.tolist() == [1, 4, 2]


def test_a_scalar_scan_over_xs():
    body = lambda x, total: (total + x, total + x)  # noqa: E731
    single = plan(entry_rank=0, has_cond=False, frames=((),))
    ys, total, count = run_scan(single, None, body, [0.0], [np.arange(4.0)], None, None)
    assert ys.tolist() == [0, 1, 3, 6] and total == 6 and count == 4 and count.dtype == np.int32


def test_tensor_array_elements_instead_of_stacked_frames():
    single = plan(entry_rank=0, has_cond=False, frames=((),), arrays=True)
    elements, _, _ = run_scan(single, None, lambda s: (s, s + 1), [0.0], [], 3, None)
    assert isinstance(elements, ArrayElements) and list(elements) == [0.0, 1.0, 2.0]
    assert elements.dynamic_size


def test_compacted_frames_are_full_frames_as_tensor_array_elements_too():
    """A compacted scan keeps the working rows of each frame and writes them into the stacked ys at the end;
    TensorArray elements get full frames."""
    def body(h, step, limit):
        return h, h + 1, step + 1, limit

    initial = [np.zeros((3, 2)), np.zeros(3, np.int32), np.array([1, 4, 2], np.int32)]
    results = {(compaction, arrays): run_scan(plan(compaction, arrays=arrays), lambda h, s, n: s < n, body,
                                              initial, [], None, None)[0]
               for compaction in ("mask", "compact") for arrays in (False, True)}
    expected = results["mask", False]
    np.testing.assert_array_equal(results["compact", False], expected)
    for compaction in ("mask", "compact"):
        elements = list(results[compaction, True])
        assert all(isinstance(e, np.ndarray) for e in elements)
        np.testing.assert_array_equal(np.array(elements), expected)


@pytest.mark.parametrize("xs, spatial_dim, max_seq_len, expected", [
    ([], None, None, None), ([np.zeros(3)], None, None, 3), ([np.zeros(3)], 3, 2, 2), ([], 5, 7, 5),
    ([], None, np.int64(4), 4),
])
def test_frame_limit(xs, spatial_dim, max_seq_len, expected):
    assert frame_limit(xs, spatial_dim, max_seq_len) == expected


def test_a_cond_of_the_wrong_shape_is_an_error():
    with pytest.raises(InvalidArgumentError, match=r"cond returned booleans of shape \(2,\), expected the entries' "
                                                   r"shape \(3,\)"):
        run_scan(plan(), lambda h: np.ones(2, bool), lambda h: (h, h), [np.zeros((3, 2))], [], None, None)
    with pytest.raises(InvalidArgumentError, match=r"cond returned shape \(2,\), expected one boolean"):
        run_scan(plan(entry_rank=0, frames=()), lambda h: np.ones(2, bool), lambda h: (h,), [np.zeros(2)], [], 3,
                 None)


def test_a_frame_without_the_entries_is_an_error():
    with pytest.raises(InvalidArgumentError, match=r"frame of shape \(2,\) for ys\[0\]"):
        run_scan(plan(), lambda h: h[:, 0] < 1, lambda h: (h[0], h + 1), [np.zeros((3, 2))], [], None, None)
