"""`print` in a converted function stays Python's: it prints on every call. TensorFlow prints only while
tracing; ``do_not_convert(print)`` gives that behaviour (the README's "Coming from TensorFlow")."""

from __future__ import annotations

import pytest

import autoloop as al
from tests.function_surface.backends import BACKENDS

trace_print = al.do_not_convert(print)


@pytest.mark.parametrize("target", BACKENDS)
def test_print_prints_on_every_call_and_do_not_convert_print_while_tracing(target, capsys):
    @al.function(backend=target)
    def f(x):
        print("every call", x)
        trace_print("tracing", x.shape)
        return x + 1

    f(al.constant(1))
    f(al.constant(2))
    assert capsys.readouterr().out == "tracing ()\nevery call 1\nevery call 2\n"


def test_do_not_convert_leaves_print_itself_converted(capsys):
    assert trace_print is not print and al.do_not_convert(len) is not len
    assert al.do_not_convert(len)([1, 2]) == 2

    @al.function
    def f(x):
        print("x is", x)
        return x

    f(al.constant(3))
    f(al.constant(4))
    assert capsys.readouterr().out == "x is 3\nx is 4\n"
