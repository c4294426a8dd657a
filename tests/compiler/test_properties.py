"""Generated programs give the same result converted and unconverted (Python values)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoloop.compiler import conversion
from .programs import make_function, programs


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(-4, 6), st.integers(-4, 6))
def test_converted_program_matches_python(source, a, b):
    function = make_function(source, "generated")
    converted = conversion.convert(function)
    assert converted(a, b) == function(a, b), conversion.converted_source(function)
