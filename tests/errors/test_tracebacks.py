"""A newcomer's mistake fits on a screen: the traceback shows the user's frames, not autoloop's.

Each program makes one of the first hour's mistakes and runs as a script, as a user would run it;
the whole of what Python prints must stay within about 15 lines, show the user's statement and the
message, show no frame of autoloop's internals and print the error once (no "During handling of
the above exception"). ``AUTOLOOP_TRACEBACK_FILTERING=off`` brings every frame back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

MISTAKES = {
    "list_argument": ("""
        @tf.function
        def total(xs):
            s = tf.constant(0)
            i = tf.constant(0)
            while i < 3:
                s += xs[i]
                i += 1
            return s

        total([1, 2, 3])
        """, "s += xs[i]", "TypeError: `xs[i]` at"),
    "numpy_inside": ("""
        @tf.function
        def f(x):
            y = x.numpy()
            return y

        f(tf.constant(1))
        """, "y = x.numpy()", "TypeError: `x.numpy()` at"),
    "tensor_index_into_a_list": ("""
        @tf.function
        def pick(k):
            options = [10, 20, 30]
            return options[k]

        pick(tf.constant(1))
        """, "return options[k]", "options"),
    "dtype_change": ("""
        @tf.function
        def f(x):
            while x < 10:
                x = tf.cast(x, tf.float32) + 1.5
            return x

        f(tf.constant(1))
        """, "while x < 10:", "LoopVariableTypeError: loop variable 'x' has dtype int32 before the loop"),
    "shape_change": ("""
        @tf.function
        def f(x):
            while tf.reduce_sum(x) < 10:
                x = tf.concat([x, x], 0)
            return x

        f(tf.constant([1]))
        """, "while tf.reduce_sum(x) < 10:", "ShapeInvariantError: loop variable 'x' has shape (1,) before the loop, but shape (2,)"),
    "try_except_around_a_loop": ("""
        @tf.function
        def f(x):
            try:
                while x < 10:
                    x += 1
            except ValueError:
                x = 0
            return x

        f(tf.constant(1))
        """, "while x < 10:", "UnsupportedError: a while loop whose condition is a Tensor"),
}


def run(tmp_path, name, filtering=None):
    source, _, _ = MISTAKES[name]
    path = tmp_path / f"{name}.py"
    path.write_text("import autoloop as tf\n" + textwrap.dedent(source))
    environment = dict(os.environ)
    if filtering is not None:
        environment["AUTOLOOP_TRACEBACK_FILTERING"] = filtering
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, env=environment)
    assert result.returncode == 1 and result.stdout == ""
    return path, result.stderr.splitlines()


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_the_traceback_of_a_mistake_fits_on_a_screen(tmp_path, name):
    path, lines = run(tmp_path, name)
    _, statement, words = MISTAKES[name]
    assert len(lines) <= 15, "\n".join(lines)
    assert lines[0] == "Traceback (most recent call last):"
    assert any(line.strip() == statement for line in lines), "\n".join(lines)
    assert any(f'File "{path}"' in line for line in lines)
    assert words in lines[-1], lines[-1]
    internal = [line for line in lines if line.strip().startswith("File ") and "autoloop" in line.split('"')[1]
                and str(path) not in line]
    assert len(internal) <= 1, "\n".join(lines)  # at most the entry point that re-raised it
    assert not any("During handling of the above exception" in line for line in lines)


def test_filtering_off_shows_autoloops_frames(tmp_path):
    _, lines = run(tmp_path, "dtype_change", filtering="off")
    assert len(lines) > 20
    assert any("loop_vars.py" in line for line in lines)


def test_an_error_the_users_code_raised_while_handling_another_keeps_both(tmp_path):
    path = tmp_path / "handler.py"
    path.write_text(textwrap.dedent("""
        import autoloop as tf

        @tf.function
        def f(x):
            try:
                raise KeyError("inner")
            except KeyError:
                raise ValueError("outer")

        f(tf.constant(1))
        """))
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    lines = result.stderr.splitlines()
    assert lines[0] == "KeyError: 'inner'"  # as plain Python shows it, less the converted code's frame
    assert "During handling of the above exception, another exception occurred:" in lines
    assert lines[-1] == "ValueError: outer" and '    raise ValueError("outer")' in lines


def test_an_autoloop_error_raised_while_handling_its_own_is_shown_once():
    from autoloop import tracebacks

    def internal():
        try:
            {}["missing"]
        except KeyError:
            raise ValueError("clearer")  # as autoloop raises a clearer error for one it caught

    internal.__code__ = internal.__code__.replace(co_filename=tracebacks._PACKAGE_DIR + "fake.py")
    try:
        internal()
    except ValueError as error:
        filtered = tracebacks.filter_traceback(error)
    assert filtered.__suppress_context__ and filtered.__traceback__ is not None  # this test's frame is kept
    assert all(not tracebacks.is_internal(tb.tb_frame.f_code.co_filename) for tb in _frames(filtered.__traceback__))


def _frames(traceback):
    while traceback is not None:
        yield traceback
        traceback = traceback.tb_next
