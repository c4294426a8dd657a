"""Dropping a converted function frees its conversion, its traces and what they registered.

Nothing the conversion cache keeps for a function refers back to it, and the
source maps and ``linecache`` entries of converted code and compiled graphs
go when that code does, so a program that makes many short-lived functions
(closures in a loop, generated code) does not grow.
"""

import gc
import linecache
import weakref

import autoloop as al
from autoloop import source_map
from autoloop.compiler import conversion

from ..compiler.programs import make_function


def _closure(k):
    def scaled(x):
        if x > 0:
            x = x * k
        return x
    return scaled


def _registered():
    return len(linecache.cache), len(source_map._MAPS), len(conversion._CODES)


def test_a_thousand_dropped_closures_are_freed_with_their_traces():
    al.function(_closure(0))(al.constant(1))  # the code all the closures share is converted once
    gc.collect()
    before = _registered()
    alive = []
    for k in range(1000):
        function = _closure(k)
        staged = al.function(function)
        assert staged(al.constant(2)).numpy() == 2 * k
        assert al.to_graph(function)(3) == 3 * k  # converted, not traced
        alive += [weakref.ref(function), weakref.ref(staged)]
        del function, staged
    gc.collect()
    assert sum(ref() is not None for ref in alive) == 0
    assert _registered() == before


def test_generated_functions_free_their_converted_code_source_maps_and_linecache_entries():
    gc.collect()
    before = _registered()
    codes = []
    for k in range(50):
        function = make_function(f"""
            def generated_{k}(n):
                total = n * 0
                for i in range(n):
                    total += i * {k}
                return total
            """, f"generated_{k}")
        assert al.function(function)(al.constant(4)).numpy() == 6 * k
        codes.append(weakref.ref(function.__code__))
        filename = function.__code__.co_filename
        del function
        linecache.cache.pop(filename)  # the test's own registration of the source
    gc.collect()
    assert sum(ref() is not None for ref in codes) == 0
    assert _registered() == before


def test_a_live_function_keeps_its_converted_source_and_error_lines():
    function = _closure(3)
    converted = al.to_graph(function)
    gc.collect()
    filename = converted.__wrapped__.__code__.co_filename
    assert source_map.is_generated(filename) and filename in linecache.cache
    assert al.to_code(function).startswith("def scaled(x):")


def test_a_wrapper_that_copied_the_functions_dict_is_converted_as_itself():
    import functools

    def base(x):
        if x > 0:
            x = x + 10
        return x
    al.to_graph(base)  # caches base's conversion on base

    @functools.wraps(base)  # copies base.__dict__, cache entry included
    def wrapper(x):
        return base(x) * 2

    assert al.function(wrapper)(al.constant(1)).numpy() == 22
    assert al.to_graph(wrapper)(1) == 22
