"""Bad arguments to `scan` are clear errors naming the argument, eagerly and traced alike."""

from __future__ import annotations

import pytest

import autoloop as al
from autoloop.errors import InvalidArgumentError, LoopVariableTypeError


def step_body(x, step):
    return step, step + 1


SPEC = al.TensorSpec([], al.int32)


@pytest.mark.parametrize("arguments, error, words", [
    (dict(body=None, spatial_dim=2), TypeError, "body must be callable"),
    (dict(body=step_body, cond=3, initial=0), TypeError, "cond must be callable"),
    (dict(body=step_body, initial=0), ValueError, "scan needs to know when to stop: pass cond"),
    (dict(body=step_body, initial=0, max_seq_len=3), ValueError, "pass cond"),
    (dict(body=step_body, initial=0, spatial_dim=2, cond_dims=[2]), ValueError, "cond_dims=[2] is the shape of cond"),
    (dict(body=step_body, initial=al.zeros([2]), xs=al.zeros([3, 5]), cond=lambda x, s: s > 0, cond_dims=[2]),
     ValueError, "xs with cond_dims hold [frames, *entries, ...]"),
    (dict(body=step_body, initial=0, spatial_dim=2.5), TypeError, "spatial_dim must be an int"),
    (dict(body=step_body, initial=0, spatial_dim=-1), ValueError, "spatial_dim must be >= 0"),
    (dict(body=step_body, initial=0, spatial_dim=al.constant([2, 3])), ValueError,
     "the state value initial[0] must hold the entries"),  # a per-entry spatial_dim: one length per entry
    (dict(body=step_body, initial=0, spatial_dim=2, max_seq_len=-2), ValueError, "max_seq_len must be >= 0"),
    (dict(body=step_body, initial=0, spatial_dim=True), TypeError, "spatial_dim must be an int"),
    (dict(body=step_body, initial=0, spatial_dim=2, compaction="sometimes"), ValueError, "compaction must be"),
    (dict(body=step_body, initial=0, spatial_dim=2, cond_before_body=None), TypeError, "cond_before_body must be"),
    (dict(body=step_body, initial=0, spatial_dim=2, return_tensor_arrays=1), TypeError, "return_tensor_arrays"),
    (dict(body=step_body, initial=0, xs=al.constant(3)), ValueError, "xs is a scalar"),
    (dict(body=step_body, initial=0, xs=(al.zeros([3]), al.zeros([4]))), ValueError, "different lengths"),
    (dict(body=step_body, initial=0, spatial_dim=2, ys=[SPEC, None]), TypeError, "ys[1] is None"),
    (dict(body=step_body, initial=0, spatial_dim=2, ys="int32"), TypeError, "ys is a str"),
    (dict(body=step_body, initial=al.zeros([2]), cond=lambda x, s: s > 0, cond_dims="batch"), TypeError,
     "cond_dims must be a list of sizes"),
    (dict(body=step_body, initial=al.zeros([2]), cond=lambda x, s: s > 0, cond_dims=[-2]), TypeError,
     "cond_dims entries must be sizes"),
    (dict(body=step_body, initial=al.constant(0), cond=lambda x, s: s > 0, cond_dims=[2]), ValueError,
     "the state value initial must hold the entries on its leading axes, but its shape is ()"),
    (dict(body=step_body, initial=(al.zeros([3]), al.zeros([4])), cond=lambda x, s: s[0] > 0, cond_dims=[None]),
     ValueError, "the state value initial[1] must hold the entries"),
    (dict(body=step_body, cond=lambda x, s: True, cond_dims=[2], max_seq_len=1), ValueError,
     "the state (initial) must hold the entries"),
    (dict(body=step_body, initial=(al.zeros([2]), al.TensorArray(al.int32)), cond=lambda x, s: s[0] > 0,
          cond_dims=[2]), TypeError, "initial[1] is a TensorArray"),
    (dict(body=step_body, initial=al.zeros([2]), cond=lambda x, s: s > 0, cond_dims=[2], ys=SPEC), ValueError,
     "the frame template ys must hold the entries"),
])
def test_argument_errors_name_the_argument(mode, arguments, error, words):
    with pytest.raises(error) as raised:
        mode(lambda: al.scan(**arguments))
    assert words in str(raised.value)


@pytest.mark.parametrize("body, ys, error, words", [
    (lambda x, s: s + 1, SPEC, TypeError, "body must return a pair (y, state)"),
    (lambda x, s: (s, s, s), SPEC, TypeError, "body must return a pair (y, state)"),
    (lambda x, s: (al.cast(s, al.float32), s), SPEC, TypeError,
     "the body's frame for ys is float32 but its template is int32"),
    (lambda x, s: (al.stack([s, s]), s), SPEC, ValueError, "the body's frame for ys has shape (2,), which does not "
                                                           "match its template ()"),
    (lambda x, s: ((s, s), s), SPEC, ValueError, "body's y must have the structure of ys"),
    (lambda x, s: ([s], s), [SPEC, SPEC], ValueError, "body's y must have the structure of ys"),
    (lambda x, s: (s, s), None, ValueError, "body returned a frame y (a int32 tensor of shape ()) but ys is None"),
    (lambda x, s: (None, s), SPEC, ValueError, "the body's frame for ys is None; it must be a tensor like its "
                                                "template (int32 of shape ())"),
    (lambda x, s: (s, al.cast(s, al.float32)), SPEC, LoopVariableTypeError, "initial has dtype int32 before the loop, but dtype float32"),
    (lambda x, s: (s, al.stack([s, s])), SPEC, ValueError, "initial has shape () before the loop, but shape (2,)"),
    (lambda x, s: (s, (s, s)), SPEC, LoopVariableTypeError, "does not have the same nested structure after one iteration"),
])
def test_what_the_body_returns_is_checked(mode, body, ys, error, words):
    with pytest.raises(error) as raised:
        mode(lambda: al.scan(body=body, initial=al.constant(0), spatial_dim=2, ys=ys))
    assert words in str(raised.value)


def test_a_state_returned_without_initial(mode):
    with pytest.raises(ValueError, match="body returned a state .* but initial is None"):
        mode(lambda: al.scan(body=lambda x, s: (None, al.constant(1)), spatial_dim=2))


@pytest.mark.parametrize("cond, cond_dims, error, words", [
    (lambda x, s: s, None, TypeError, "cond must return booleans, got a float32 tensor"),
    (lambda x, s: s > 0, None, ValueError, "pass cond_dims=[3] to stop each entry on its own"),
    (lambda x, s: al.reduce_any(s > 0), [3], ValueError, "cond returned booleans of shape (), expected cond_dims"),
])
def test_what_cond_returns_is_checked(mode, cond, cond_dims, error, words):
    with pytest.raises(error) as raised:
        mode(lambda: al.scan(body=lambda x, s: (None, s), cond=cond, cond_dims=cond_dims, initial=al.zeros([3])))
    assert words in str(raised.value)


def test_a_while_condition_that_is_a_list_is_named_in_while_loop_too():
    with pytest.raises(TypeError, match="boolean scalar"):
        al.while_loop(lambda s: s > 0, lambda s: s - 1, [al.ones([3])])


# -- found only when the graph runs ---------------------------------------------------------------
def test_spatial_dim_that_disagrees_with_xs(mode):
    with pytest.raises(InvalidArgumentError, match="spatial_dim is 2 but xs has 3 frames"):
        mode(lambda n: al.scan(body=step_body, initial=0, xs=al.zeros([3]), spatial_dim=n, ys=SPEC), al.constant(2))


def test_a_negative_frame_count_tensor(mode):
    with pytest.raises(InvalidArgumentError, match="max_seq_len must be >= 0, got -1"):
        mode(lambda n: al.scan(body=step_body, initial=0, spatial_dim=3, max_seq_len=n, ys=SPEC), al.constant(-1))


def test_no_frames_and_a_template_without_full_shape(mode):
    with pytest.raises(InvalidArgumentError, match=r"scan ran no frames, and the frame shape of ys\['a'\]"):
        mode(lambda n: al.scan(body=lambda x, s: ({"a": al.fill(al.reshape(s, [1]), 0)}, s), initial=al.constant(0),
                               spatial_dim=n, ys={"a": al.TensorSpec([None], al.int32)}), al.constant(0))


def test_frames_whose_shapes_vary(mode):
    def body(x, s):
        return al.fill(al.reshape(s, [1]), 1), s + 1

    with pytest.raises(InvalidArgumentError, match=r"the frames of ys have different shapes \[\(0,\), \(1,\)\]"):
        mode(lambda n: al.scan(body=body, initial=al.constant(0), spatial_dim=n,
                               ys=al.TensorSpec([None], al.int32)), al.constant(2))


def test_a_body_that_changes_the_number_of_entries(mode):
    def body(x, s):
        return None, al.concat([s, s], 0)[:2 * al.shape(s)[0] - 1]

    with pytest.raises((InvalidArgumentError, ValueError), match="changed the shape of initial"):
        mode(lambda: al.scan(body=body, cond=lambda x, s: s < 3, cond_dims=[2], initial=al.zeros([2], al.int32)))


def test_compaction_true_with_a_body_that_mixes_entries(mode):
    def body(x, state):
        h, step = state
        return None, (h - al.reduce_mean(h, axis=0), step + 1)  # every entry sees the others

    with pytest.raises(ValueError) as raised:
        mode(lambda: al.scan(body=body, cond=lambda x, s: s[1] < 3, cond_dims=[2], compaction=True,
                             initial=(al.ones([2, 3]), al.zeros([2], al.int32))))
    message = str(raised.value)
    assert "scan(compaction=True) needs a body and cond that treat entries independently" in message
    assert "Mean" in message and "it works along axis 0" in message and "test_scan_errors.py" in message
