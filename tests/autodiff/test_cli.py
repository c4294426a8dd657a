"""The command line shows gradient graphs like any graph, and --explain says what each loop saves."""

import textwrap

from autoloop import cli

MODEL = textwrap.dedent('''
    import autoloop as al


    @al.function
    def rnn_gradient(h, w, xs):
        with al.GradientTape() as tape:
            tape.watch(w)
            for t in al.range(al.shape(xs)[0]):
                h = al.tanh(al.matmul(w, h) + xs[t])
            loss = al.reduce_sum(h)
        return tape.gradient(loss, w)


    @al.function
    def doubling_gradient(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = x
            while y < 100.0:
                al.set_loop_options(checkpoint=True)
                y = y * 2.0 + x
        return tape.gradient(y, x)


    @al.function
    def solved_jacobian(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in al.range(3):
                y = al.sin(y) * x
            z = al.linalg.solve(al.eye(3) * 2.0, y[:, None])[:, 0]
        return tape.jacobian(z, x)
''')


def _write(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return str(path)


def test_run_explain_says_which_loops_were_differentiated(tmp_path, capsys):
    target = _write(tmp_path) + "::rnn_gradient"
    code = cli.main(["run", target, "[0.1, 0.2]", "[[1.0, 0.5], [0.0, 1.0]]", "[[1.0, 2.0], [0.5, 0.1]]",
                     "--explain"])
    out = capsys.readouterr().out
    assert code == 0
    assert ("line 9: while loop 'while' `for t in al.range(al.shape(xs)[0]):`: differentiated; its backward "
            "pass saves 2 values per iteration (Tanh, a loop variable)") in out


def test_graph_shows_the_backward_loop_and_explains_checkpoints(tmp_path, capsys):
    target = _write(tmp_path) + "::doubling_gradient"
    code = cli.main(["graph", target, "--args", "[3.0]", "--explain"])
    out = capsys.readouterr().out
    assert code == 0
    assert "= While(" in out and "while_replay" in out and "while_segment_grad" in out
    assert "differentiated with checkpoints (checkpoints at iterations 0, 1, 4, 9" in out
    assert "recomputed stretches save 0 values per iteration" in out  # y * 2 + x needs no forward value


def test_run_explain_says_how_a_jacobian_was_vectorized(tmp_path, capsys, recwarn):
    """The backward loop runs once for all rows; the op without a batching rule runs per row, in a loop."""
    target = _write(tmp_path) + "::solved_jacobian"
    assert cli.main(["run", target, "[0.1, 0.2, 0.3]", "--explain"]) == 0
    out = capsys.readouterr().out
    assert ("line 34: while loop 'while_grad' `return tape.jacobian(z, x)`: one loop for all entries at once "
            "(GradientTape.jacobian)") in out, out
    assert ("line 34: while loop 'map' `return tape.jacobian(z, x)`: GradientTape.jacobian runs MatrixSolve once "
            "per entry here: it has no batching rule") in out, out
    assert any("runs MatrixSolve" in str(w.message) for w in recwarn.list)


def test_graph_explain_without_gradients(tmp_path, capsys):
    path = tmp_path / "plain.py"
    path.write_text("def f(x):\n    return x * 2\n")
    assert cli.main(["graph", f"{path}::f", "--args", "[1.0]", "--explain"]) == 0
    assert "no loop was differentiated" in capsys.readouterr().out
