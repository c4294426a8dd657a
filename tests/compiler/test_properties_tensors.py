"""Generated programs give the same result on tensors (staged) as on Python ints."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autoloop as al
from autoloop.compiler import conversion

from .programs import make_function, programs


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs(c_start="a - a"), st.integers(-4, 6), st.integers(-4, 6))
def test_staged_program_matches_python(source, a, b):
    function = make_function(source, "generated")
    expected = function(a, b)
    result = al.function(function)(al.constant(a), al.constant(b))
    assert int(result.numpy()) == expected, conversion.converted_source(function)
