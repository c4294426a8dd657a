"""`GradientTape` and variables: trainable variables it reads are watched, eagerly and in functions, through
loops and branches."""

import numpy as np
import pytest

import autoloop as al
from tests.variables.backends import BACKENDS


def test_a_tape_watches_the_trainable_variables_it_reads():
    w = al.Variable([1.0, 2.0], name="w")
    b = al.Variable(0.5, name="b")
    frozen = al.Variable(3.0, trainable=False)
    with al.GradientTape() as tape:
        loss = al.reduce_sum(w * w) * frozen + 3 * b
    dw, db, dfrozen = tape.gradient(loss, [w, b, frozen])
    np.testing.assert_allclose(dw.numpy(), [6.0, 12.0])
    assert db.numpy() == 3.0 and dfrozen is None
    assert tape.watched_variables() == (w, b)


def test_one_variable_a_dict_and_the_unconnected_ones():
    w = al.Variable(2.0)
    unused = al.Variable(1.0)
    with al.GradientTape(persistent=True) as tape:
        y = w * w
    assert tape.gradient(y, w).numpy() == 4.0
    found = tape.gradient(y, {"w": w, "u": unused})
    assert found["w"].numpy() == 4.0 and found["u"] is None
    found = tape.gradient(y, {"w": w, "u": unused}, unconnected_gradients="zero")
    assert found["w"].numpy() == 4.0 and found["u"].numpy() == 0.0 and found["u"].dtype == al.float32


def test_every_read_counts_also_after_an_update():
    v = al.Variable(1.0)
    with al.GradientTape() as tape:
        total = 0.0
        for _ in range(3):
            total += v * v * 2.0
            v.assign_add(1.0)
    assert total.numpy() == 28.0
    assert tape.gradient(total, v).numpy() == 24.0  # 4 * (1 + 2 + 3): the sum over the reads


def test_watch_accessed_variables_false_watches_only_what_watch_names():
    a, b = al.Variable(2.0), al.Variable(3.0)
    with al.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a * b
    da, db = tape.gradient(y, [a, b])
    assert da.numpy() == 3.0 and db is None and tape.watched_variables() == (a,)
    with al.GradientTape(watch_accessed_variables=False) as tape:
        y = a * b
    assert tape.gradient(y, [a, b]) == [None, None] and tape.watched_variables() == ()


def test_reads_outside_the_block_or_in_stop_recording_are_constants():
    v = al.Variable(2.0)
    outside = v * 1.0
    with al.GradientTape() as tape:
        with tape.stop_recording():
            hidden = v * 10.0
        y = v * outside + hidden
    assert tape.gradient(y, v).numpy() == 2.0


def test_nested_tapes_give_second_derivatives():
    v = al.Variable(3.0)
    with al.GradientTape() as outer:
        with al.GradientTape() as inner:
            y = v * v * v
        dy = inner.gradient(y, v)
    assert dy.numpy() == 27.0 and outer.gradient(dy, v).numpy() == 18.0


@pytest.mark.parametrize("on", BACKENDS)
def test_in_a_function_through_a_loop_and_a_branch(on):
    v = al.Variable(1.0)
    c = al.Variable(3.0)

    @al.function(backend=on)
    def f(x):
        with al.GradientTape() as tape:
            total = 0.0
            i = 0
            while i < 3:
                total += v * v * x
                v.assign_add(1.0)
                i += 1
            if x > 0:
                total += c * c
            else:
                total += c
        dv, dc = tape.gradient(total, [v, c])
        return total, dv, dc, tape.watched_variables() == (v, c)

    total, dv, dc, order = f(al.constant(2.0))
    assert (total.numpy(), dv.numpy(), dc.numpy(), order) == (37.0, 24.0, 6.0, True)
    assert v.numpy() == 4.0  # the gradient does not run the updates again
    v.assign(1.0)
    assert [t.numpy() for t in f(al.constant(-2.0))[:3]] == [-25.0, -24.0, 1.0]


@pytest.mark.parametrize("on", BACKENDS)
def test_an_eager_tape_differentiates_the_variables_a_function_it_calls_reads(on):
    class Quadratic(al.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = al.Variable(2.0, name="a"), al.Variable([1.0, -1.0], name="b")
            self.frozen = al.Variable(3.0, trainable=False)

        @al.function(backend=on)
        def __call__(self, x):
            total = 0.0
            i = 0
            while i < 2:  # read in a loop: every read counts
                total += al.reduce_sum(self.a * x * x + self.b * x) * self.frozen
                i += 1
            return total

    model = Quadratic()
    x = al.constant([1.0, 2.0])
    with al.GradientTape() as tape:
        loss = model(x)
    da, db, dfrozen = tape.gradient(loss, [model.a, model.b, model.frozen])
    assert loss.numpy() == 2 * 3 * (2 * 5 + (1 - 2))
    assert da.numpy() == 2 * 3 * 5 and db.numpy().tolist() == [6.0, 12.0] and dfrozen is None
    assert tape.watched_variables() == (model.a, model.b)
    with al.GradientTape() as outer:
        with al.GradientTape() as inner:
            loss = model(x)
        da = inner.gradient(loss, model.a)
    assert da.numpy() == 30.0 and outer.gradient(da, model.a) is None  # linear in a
    model(x)  # outside a tape: the plain trace
    assert model.__call__.experimental_get_tracing_count() == 1


def test_a_variable_as_the_target_is_the_variable_itself():
    v0, v1 = al.Variable(2.0), al.Variable(2.0)
    x = al.Variable(1.0)
    with al.GradientTape(persistent=True) as tape:
        result = v0 if x.numpy() > 0 else v1 ** 2  # the variable, not a read of it
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert dv0.numpy() == 1.0 and dv1 is None
    m = al.Variable([1.0, 2.0])
    with al.GradientTape() as tape:
        y = m * m
    np.testing.assert_allclose(tape.gradient([y, m], m, output_gradients=[al.ones([2]), al.constant([3.0, 4.0])])
                               .numpy(), [5.0, 8.0])


def test_a_variable_of_partly_known_shape():
    v = al.Variable([1.0, 2.0], shape=al.TensorShape([None]))
    with al.GradientTape() as tape:
        y = al.reduce_sum(v * v)
    assert tape.gradient(y, v).numpy().tolist() == [2.0, 4.0]  # eagerly: the value's shape now
    cubed = al.function(lambda: al.reduce_sum(v * v * v))
    with al.GradientTape() as tape:
        y = cubed()
    assert tape.gradient(y, v).numpy().tolist() == [3.0, 12.0]

    @al.function
    def traced():
        with al.GradientTape() as tape:
            y = al.reduce_sum(v * v)
        return tape.gradient(y, v)

    with pytest.raises(ValueError, match=r"its shape \(None,\) is partly known, and a tape in a traced function"):
        traced()


# -- autoloop.gradients with respect to variables --------------------------------------------------------
@pytest.mark.parametrize("on", BACKENDS)
def test_gradients_with_respect_to_a_variable_sums_its_reads(on):
    w, unused = al.Variable(3.0), al.Variable(1.0)

    @al.function(backend=on)
    def f(x):
        y = w * w * x + w  # two reads
        return al.gradients(y, [w, x, unused]), al.gradients(y, unused, unconnected_gradients="zero")

    (dw, dx, du), (zero,) = f(al.constant(2.0))
    assert (dw.numpy(), dx.numpy(), du, zero.numpy()) == (13.0, 9.0, None, 0.0)


@pytest.mark.parametrize("on", BACKENDS)
def test_gradients_with_respect_to_a_variable_read_in_loops_and_branches(on):
    w = al.Variable(3.0)
    c = al.Variable(2.0)

    @al.function(backend=on)
    def f(n):
        total = w * 1.0
        while total < n:
            al.set_loop_options(maximum_iterations=10)  # XLA's bound for what the gradient saves
            total += w * c
            w.assign_add(1.0)
        if total > 15.0:
            total = total * c
        return total, al.gradients(total, [w, c])

    total, (dw, dc) = f(al.constant(10.0))
    # reads of w: 3 (before the loop), 3 and 4 (in the body): (3 + 3 c + 4 c) c = 34 with c = 2
    assert total.numpy() == 34.0 and w.numpy() == 5.0
    assert dw.numpy() == (1 + 2 * 2.0) * 2.0  # summed over the three reads
    assert dc.numpy() == 17.0 + 2.0 * (3.0 + 4.0)


def test_gradients_with_respect_to_a_tf1_graph_variable():
    import autoloop.compat.v1 as v1
    with v1.Graph().as_default():
        v = v1.get_variable("v", shape=[2], initializer=v1.ones_initializer())
        loss = al.reduce_sum(v * v * 3.0)
        (grad,) = al.gradients(loss, [v])
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            assert session.run(grad).tolist() == [6.0, 6.0]
            session.run(v.assign([2.0, -1.0]))
            assert session.run(grad).tolist() == [12.0, -6.0]
    with v1.Graph().as_default():  # read in a while_loop body: every iteration's read counts
        v = v1.get_variable("v", shape=[], initializer=v1.constant_initializer(3.0))
        _, total = v1.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + v * v), [0, 0.0])
        (grad,) = al.gradients(total, [v])
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            assert session.run([total, grad]) == [27.0, 18.0]


# -- loops whose gradient recomputes their iterations --------------------------------------------------------
@pytest.mark.parametrize("on", BACKENDS)
def test_a_scan_body_that_reads_a_variable(on):
    w = al.Variable(0.5)
    xs = al.constant([1.0, 2.0, 3.0])

    def rnn(xs, weight):
        _, state, _ = al.scan(body=lambda x, s: (None, al.tanh(s * weight + x)), xs=xs, initial=al.constant(0.0))
        return state

    def by_hand(w):
        state = 0.0
        for x in (1.0, 2.0, 3.0):
            state = np.tanh(state * w + x)
        return state
    expected = (by_hand(0.5 + 1e-3) - by_hand(0.5 - 1e-3)) / 2e-3

    @al.function(backend=on)
    def traced(xs):  # the function never updates w: the scan's gradient may read it again
        with al.GradientTape() as tape:
            state = rnn(xs, w)
        return tape.gradient(state, w)

    @al.function(backend=on)
    def one_step(xs):  # the update comes after the gradient: the scan's gradient reads w before it
        with al.GradientTape() as tape:
            state = rnn(xs, w)
        grad = tape.gradient(state, w)
        w.assign_sub(0.1 * grad)
        return grad

    @al.function(backend=on)
    def two_steps(xs, read_before):  # the second gradient comes after an update: refused unless read before
        for _ in range(2):
            with al.GradientTape() as tape:
                state = rnn(xs, w.read_value() if read_before else w)
            grad = tape.gradient(state, w)
            w.assign_sub(0.1 * grad)
        return grad

    np.testing.assert_allclose(traced(xs).numpy(), expected, rtol=1e-3)
    if on == "numpy":  # (on jax, an eager tape's call of a function whose loops save values is refused)
        with al.GradientTape() as tape:  # an eager tape around a call: the same
            state = al.function(rnn, backend=on)(xs, w)
        np.testing.assert_allclose(tape.gradient(state, w).numpy(), expected, rtol=1e-3)
    np.testing.assert_allclose(one_step(xs).numpy(), expected, rtol=1e-3)
    assert abs(w.numpy() - (0.5 - 0.1 * expected)) < 1e-5
    with pytest.raises(ValueError, match=r"the loop body reads a variable at .*test_tape.py:\d+ that the function "
                                         r"also updates.*read it once before the loop"):
        two_steps(xs, False)
    w.assign(0.5)
    two_steps(xs, True)
    assert w.numpy() < 0.5 - 0.1 * expected  # two steps down a positive gradient


@pytest.mark.parametrize("traced", [False, True])
def test_a_jacobian_for_a_variable_differentiates_its_reads(traced):
    # TF's advanced autodiff guide: the Jacobian of sigmoid(x + delta) for a scalar variable delta.
    delta, rows = al.Variable(0.0), al.Variable([[1.0, 2.0], [3.0, 4.0]])
    unread = al.Variable(1.0)
    x = al.constant([-1.0, 0.0, 2.0])

    def jacobians():
        with al.GradientTape(persistent=True) as tape:
            y = al.nn.sigmoid(x + delta)
            z = rows * 3.0
        return (tape.jacobian(y, delta), tape.jacobian(y, [delta, unread]),
                tape.jacobian(y, unread, unconnected_gradients="zero"), tape.batch_jacobian(z, rows))

    dy, (dy_again, none), zeros, dz = (al.function(jacobians) if traced else jacobians)()
    sigmoid = 1 / (1 + np.exp(-np.array([-1.0, 0.0, 2.0])))
    np.testing.assert_allclose(dy.numpy(), sigmoid * (1 - sigmoid), rtol=1e-6)
    np.testing.assert_allclose(dy_again.numpy(), dy.numpy())
    assert none is None and zeros.numpy().tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(dz.numpy(), [[[3.0, 0.0], [0.0, 3.0]]] * 2)
