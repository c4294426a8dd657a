"""TensorShape, dtypes, nest and Tensor conversion: the value types' contracts."""

import collections

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autoloop as al
from autoloop import nest
from autoloop.shapes import TensorShape

dims = st.one_of(st.none(), st.integers(0, 5))
shapes = st.one_of(st.just(TensorShape(None)), st.lists(dims, max_size=4).map(TensorShape))


class TestTensorShape:
    def test_seed_examples_of_generality(self):
        # "a shape of [11, None] is more general than a shape of [11, 17],
        #  and [11, 21] is not compatible with [11, 17]"
        assert TensorShape([11, 17]).is_subtype_of(TensorShape([11, None]))
        assert not TensorShape([11, None]).is_subtype_of(TensorShape([11, 17]))
        assert not TensorShape([11, 21]).is_compatible_with(TensorShape([11, 17]))

    def test_reading(self):
        shape = TensorShape([2, None])
        assert shape.rank == 2 and shape.as_list() == [2, None] and shape[0] == 2
        assert not shape.is_fully_defined() and TensorShape([2, 3]).is_fully_defined()
        assert TensorShape(None).rank is None
        assert shape == TensorShape([2, None]) and shape == [2, None]
        assert str(shape) == "(2, None)" and repr(shape) == "TensorShape([2, None])"
        with pytest.raises(ValueError, match="unknown TensorShape"):
            TensorShape(None).as_list()

    def test_most_specific_compatible_shape(self):
        assert TensorShape([2, 2]).most_specific_compatible_shape([4, 2]) == TensorShape([None, 2])
        assert TensorShape([2]).most_specific_compatible_shape([2, 2]) == TensorShape(None)

    def test_bad_dimensions(self):
        with pytest.raises(ValueError, match=">= 0"):
            TensorShape([-1])
        with pytest.raises(TypeError, match="int or None"):
            TensorShape(["a"])

    @given(shapes, shapes)
    def test_compatibility_is_symmetric(self, a, b):
        assert a.is_compatible_with(b) == b.is_compatible_with(a)

    @given(shapes, shapes)
    def test_most_specific_compatible_shape_generalizes_both(self, a, b):
        general = a.most_specific_compatible_shape(b)
        assert a.is_subtype_of(general) and b.is_subtype_of(general)

    @given(shapes, shapes)
    def test_merge_is_at_least_as_specific_as_both(self, a, b):
        if a.is_compatible_with(b):
            merged = a.merge_with(b)
            assert merged.is_subtype_of(a) and merged.is_subtype_of(b)
        else:
            with pytest.raises(ValueError, match="not compatible"):
                a.merge_with(b)


class TestDtypes:
    def test_python_values_convert_as_in_tensorflow(self):
        assert al.constant(1).dtype is al.int32
        assert al.constant(1.5).dtype is al.float32
        assert al.constant(True).dtype is al.bool
        assert al.constant([1, 2.5]).dtype is al.float32
        assert al.constant(np.arange(3)).dtype is al.int64

    def test_names_and_numpy_types(self):
        assert al.as_dtype("float64") is al.float64
        assert al.int32.as_numpy_dtype is np.int32 and al.int32.name == "int32"
        with pytest.raises(TypeError, match="supports bool, int8, int16, int32, int64, uint8, float16, float32, float64"):
            al.as_dtype("complex64")


class TestNest:
    Pair = collections.namedtuple("Pair", "j k")

    def test_flatten_and_pack_round_trip(self):
        structure = (1, {"b": [2, 3], "a": self.Pair(4, 5)}, [6])
        flat = nest.flatten(structure)
        assert flat == [1, 4, 5, 2, 3, 6]
        assert nest.pack_sequence_as(structure, flat) == structure
        assert type(nest.pack_sequence_as(structure, flat)[1]["a"]) is self.Pair

    def test_map_structure(self):
        assert nest.map_structure(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])

    def test_assert_same_structure(self):
        nest.assert_same_structure((1, [2]), (3, [4]))
        with pytest.raises(ValueError, match="same nested structure"):
            nest.assert_same_structure((1, 2), (1, 2, 3))
        with pytest.raises(TypeError):
            nest.assert_same_structure((1, 2), [1, 2])
        nest.assert_same_structure((1, 2), [1, 2], check_types=False)

    def test_pack_with_the_wrong_number_of_leaves(self):
        with pytest.raises(ValueError, match="2 leaves but flat_sequence has 3"):
            nest.pack_sequence_as((0, 0), [1, 2, 3])


class TestTensor:
    def test_repr_like_tensorflow(self):
        assert repr(al.constant(285)) == "<autoloop.Tensor: shape=(), dtype=int32, numpy=285>"
        assert repr(al.constant([1.0, 2.0])).startswith("<autoloop.Tensor: shape=(2,), dtype=float32, numpy=")

    def test_python_numbers_take_the_tensor_dtype(self):
        x = al.constant([1.0, 2.0])
        assert (x + 1).dtype is al.float32
        with pytest.raises(TypeError, match="floating-point"):
            al.constant([1, 2]) + 1.5

    def test_mixed_dtypes_are_rejected_with_the_fix(self):
        with pytest.raises(TypeError, match="expected to be a int32 tensor but is a float32 tensor.*cast"):
            al.constant(1) + al.constant(1.0)

    def test_operators_match_numpy(self):
        a = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
        x = al.constant(a)
        np.testing.assert_array_equal((x @ x).numpy(), a @ a)
        np.testing.assert_array_equal((-x).numpy(), -a)
        np.testing.assert_array_equal(abs(x).numpy(), np.abs(a))
        np.testing.assert_array_equal((x ** 2).numpy(), a ** 2)
        np.testing.assert_array_equal((x < 2).numpy(), a < 2)
        np.testing.assert_array_equal(x[:, 0].numpy(), a[:, 0])
        np.testing.assert_array_equal(x[1:, ::-1].numpy(), a[1:, ::-1])
        np.testing.assert_array_equal((2 - x).numpy(), 2 - a)
        assert (al.constant(7) // 2).numpy() == 3 and (al.constant(-7) % 3).numpy() == 2
        assert (al.constant(3) / al.constant(2)).dtype is al.float64  # like tf.divide

    def test_indexing_with_tensor_indices(self):
        x = al.constant([10, 20, 30])
        assert x[al.constant(1)].numpy() == 20
        assert x[al.constant(1):].numpy().tolist() == [20, 30]

    def test_symbolic_tensors_refuse_python_bool_with_a_hint(self):
        def f(x):
            if x > 0:
                return x
            return -x
        with pytest.raises(TypeError, match="symbolic autoloop.Tensor.*@autoloop.function"):
            al.function(f, autograph=False)(al.constant(1))

    def test_set_shape(self):
        def f(x):
            x.set_shape([2, None])
            assert x.shape == TensorShape([2, None])
            with pytest.raises(ValueError, match="not compatible"):
                x.set_shape([3, None])
            return x
        al.function(f, autograph=False, input_signature=[al.TensorSpec([None, None], al.float32)])(
            np.zeros((2, 2), np.float32))

    def test_numpy_interop(self):
        x = al.constant([1.0, 2.0])
        np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])
        assert float(al.constant(2.5)) == 2.5 and int(al.constant(3)) == 3
        assert [int(v) for v in al.constant([4, 5])] == [4, 5]


def test_empty_and_single_indices_traced_match_numpy():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    f = al.function(lambda x: (x[()], x[1], x[:, 2], x[..., None]), autograph=False)
    empty, row, column, expanded = f(al.constant(a))
    np.testing.assert_array_equal(empty.numpy(), a[()])
    np.testing.assert_array_equal(row.numpy(), a[1])
    np.testing.assert_array_equal(column.numpy(), a[:, 2])
    np.testing.assert_array_equal(expanded.numpy(), a[..., None])


# -- Tensor.eval: the default compat.v1 Session, when there is one ---------------------------
def test_eval_without_a_default_session_says_what_is_missing():
    with pytest.raises(NotImplementedError, match=r"default autoloop.compat.v1.Session.*use .numpy\(\)"):
        al.constant(1).eval()
    seen = []

    @al.function(autograph=False)
    def traced(x):
        with pytest.raises(ValueError, match=r"Cannot evaluate x:0 with eval\(\): no default "
                                             r"autoloop.compat.v1.Session is registered"):
            x.eval()
        seen.append(True)
        return x

    traced(al.constant(1))
    assert seen == [True]


def test_eval_uses_the_session_it_is_given_or_the_registered_default(monkeypatch):
    class Session:
        def run(self, fetches, feed_dict=None):
            return ("ran", fetches.numpy(), feed_dict)

    assert al.constant(3).eval(feed_dict={"k": 1}, session=Session()) == ("ran", 3, {"k": 1})
    monkeypatch.setattr(al.Tensor, "default_session_evaluate", lambda tensor, feed: ("default", feed))
    assert al.constant(3).eval({"k": 2}) == ("default", {"k": 2})


def test_tensor_module_imports_nothing_of_the_op_library():
    import ast

    import autoloop.tensor
    tree = ast.parse(open(autoloop.tensor.__file__).read())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name and name.startswith("autoloop.ops")}, imported
    assert (al.constant([1, 2]) + 1).numpy().tolist() == [2, 3]  # the op library installed the operators
