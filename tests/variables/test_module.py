"""`autoloop.Module`: names, scopes, discovery of variables and sub-modules, traced methods per instance."""

import collections

import numpy as np
import pytest

import autoloop as al
from tests.variables.backends import BACKENDS


class Dense(al.Module):
    def __init__(self, size_in, size_out, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = al.Variable(np.ones([size_in, size_out], np.float32), name="w")
            self.b = al.Variable(np.zeros([size_out], np.float32), name="b")

    @al.function
    def __call__(self, x):
        return x @ self.w + self.b


Pair = collections.namedtuple("Pair", "left right")


class Model(al.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(2, 3, name="first"), Dense(3, 1, name="second")]
        self.steps = al.Variable(0, trainable=False, name="steps")
        self.extra = {"z": Pair(al.Variable(1.0, name="z"), None), "a": (al.Variable(2.0, name="a"),)}
        self.again = self.layers[0]  # held twice: found once

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_names_and_name_scopes():
    assert Model().name == "model" and Dense(1, 1).name == "dense" and Dense(1, 1, name="d").name == "d"

    class MyHTTPLayer(al.Module):
        pass
    assert MyHTTPLayer().name == "my_http_layer"
    layer = Dense(2, 1, name="layer")
    assert (layer.w.name, layer.b.name) == ("layer/w:0", "layer/b:0")
    with layer.name_scope as prefix:
        assert prefix == "layer/" and al.Variable(1.0, name="v").name == "layer/v:0"
    assert al.Variable(1.0, name="v").name == "v:0"
    assert repr(layer) == object.__repr__(layer)  # TensorFlow's: <...Dense object at 0x...>, no name
    with pytest.raises(ValueError, match="not a valid Python identifier"):
        al.Module(name="no good")


def test_variables_submodules_and_their_order():
    model = Model()
    names = [v.name for v in model.variables]
    # attributes by name (extra, layers, steps), dicts by key, then the sub-modules depth first
    assert names == ["a:0", "z:0", "steps:0", "first/b:0", "first/w:0", "second/b:0", "second/w:0"]
    assert [v.name for v in model.trainable_variables] == ["a:0", "z:0", "first/b:0", "first/w:0", "second/b:0",
                                                           "second/w:0"]
    assert [v.name for v in model.non_trainable_variables] == ["steps:0"]
    assert [m.name for m in model.submodules] == ["first", "second"]


def test_nested_modules_and_cycles():
    outer = al.Module(name="outer")
    outer.inner = al.Module(name="inner")
    outer.inner.deeper = al.Module(name="deeper")
    outer.inner.deeper.v = al.Variable(1.0)
    outer.inner.deeper.back = outer  # a cycle
    assert [m.name for m in outer.submodules] == ["inner", "deeper"]
    assert len(outer.variables) == 1 and outer.inner.variables == outer.variables


@pytest.mark.parametrize("on", BACKENDS)
def test_a_traced_method_is_traced_per_instance_and_reads_the_current_weights(on):
    class Scale(al.Module):
        def __init__(self, factor):
            super().__init__()
            self.factor = al.Variable(factor)

        @al.function(backend=on)
        def __call__(self, x):
            return self.factor * x

    two, three = Scale(2.0), Scale(3.0)
    assert two(al.constant(1.0)).numpy() == 2.0 and three(al.constant(1.0)).numpy() == 3.0
    two.factor.assign(5.0)
    assert two(al.constant(1.0)).numpy() == 5.0
    assert two.__call__.experimental_get_tracing_count() == 1 and three.__call__.experimental_get_tracing_count() == 1


def test_a_module_may_make_its_variables_on_the_first_call():
    class Lazy(al.Module):
        def __init__(self):
            super().__init__()
            self.w = None

        @al.function
        def __call__(self, x):
            if self.w is None:
                self.w = al.Variable(np.full([x.shape[-1]], 2.0, np.float32), name="w")
            return x * self.w

    lazy = Lazy()
    assert lazy.variables == ()
    np.testing.assert_array_equal(lazy(al.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(lazy(al.constant([3.0, 4.0])).numpy(), [6.0, 8.0])
    assert [v.name for v in lazy.variables] == ["w:0"] and lazy.__call__.experimental_get_tracing_count() == 1


def test_with_name_scope():
    class Named(al.Module):
        @al.Module.with_name_scope
        def make(self):
            return al.Variable(1.0, name="v")
    assert Named(name="named").make().name == "named/v:0"
