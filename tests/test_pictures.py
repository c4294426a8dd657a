"""Pictures of graphs: the dot text of both forms, drawing with Graphviz, and what happens without it.

The dot text needs nothing installed. Drawing needs the graphviz package and
Graphviz's ``dot`` program: those tests skip, saying so, where they are missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import autoloop as al
from autoloop import pictures

try:
    import graphviz  # noqa: F401
    HAVE_PACKAGE = True
except ImportError:
    HAVE_PACKAGE = False
CAN_DRAW = HAVE_PACKAGE and shutil.which("dot") is not None
needs_graphviz = pytest.mark.skipif(not CAN_DRAW, reason="drawing needs the graphviz package and Graphviz's dot "
                                                         "(pip install 'autoloop[graph]'; apt-get install graphviz)")
ROOT = Path(__file__).resolve().parents[1]


def nested3(n, scale):
    total = al.constant(0.0)
    i = al.constant(0)
    while i < n:
        j = al.constant(0)
        while j < i:
            k = al.constant(0)
            while k < j:
                total += scale * al.cast(k, al.float32)
                k += 1
            j += 1
        if total > 10.0:
            print("big", total)
        i += 1
    return total


def _graph():
    return al.function(nested3).get_concrete_function(al.constant(4), al.constant(0.5)).graph


def test_each_loop_is_a_cluster_beside_its_while_node_with_named_loop_variables():
    dot = pictures.to_dot(_graph())
    assert dot.startswith('digraph "nested3" {')
    assert len(re.findall(r"subgraph cluster_\d+ \{\n\s+label=<<B>While loop</B>", dot)) == 3
    assert len(re.findall(r"<B>While</B>", dot)) == 3 and "While while" not in dot
    for name, dtype in (("total", "float32[]"), ("i", "int32[]"), ("j", "int32[]"), ("k", "int32[]")):
        assert re.search(rf"var\d+ \[label=<<B>{name}</B><BR/><FONT [^>]*>{re.escape(dtype)}</FONT>>", dot), name
    assert dot.count("ltail=cluster_") == 3  # each loop's results leave through its While node
    # `scale` and `n`, captured by inner loops, are edges from the inputs straight into the clusters.
    inputs = re.findall(r"(n\d+) \[label=<<B>(?:n|scale)</B>", dot)  # named after the parameters
    assert len(inputs) == 2
    for source in inputs:
        assert re.search(rf"\n  {source} -> n\d+ \[color=\"#2563eb\", style=dashed", dot)
    assert "branches of Cond" in dot and "Cond cond" not in dot and "PrintV2" in dot


def test_the_lowered_picture_has_a_cluster_per_frame_and_visible_back_edges():
    dot = pictures.to_dot(_graph(), lowered=True)
    frames = re.findall(r"label=<<B>frame ([\w/]+)</B>", dot)
    assert frames == ["while", "while/body/while", "while/body/while/body/while"]
    back_edges = re.findall(r'-> n\d+ \[color="#ea580c", penwidth=2.2, constraint=false, label="next"\]', dot)
    assert len(back_edges) == len(re.findall(r"<B>[\w/]*NextIteration", dot)) and back_edges


def test_every_lowered_node_has_its_own_label():
    dot = pictures.to_dot(_graph(), lowered=True)
    labels = re.findall(r"n\d+ \[label=<<B>([^<]+)</B>", dot)
    assert len(labels) == len(set(labels)) > 30
    assert "while/Switch_1" in labels and "while/body/while/Switch_1" in labels  # the same short name, two frames
    assert "LoopCond" not in labels or labels.count("LoopCond") == 1


def test_a_named_loop_keeps_its_name_in_the_picture():
    def count(n):
        return al.while_loop(lambda i: i < n, lambda i: i + 1, [al.constant(0)], name="countdown")
    dot = pictures.to_dot(al.function(count, autograph=False).get_concrete_function(al.constant(3)).graph)
    assert "<B>While countdown</B>" in dot and "<B>While countdown loop</B>" in dot


@needs_graphviz
def test_visualize_draws_svg_for_notebooks():
    picture = al.visualize(nested3, al.constant(4), al.constant(0.5))
    svg = picture._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "While loop" in svg
    lowered = al.visualize(al.function(nested3), al.constant(4), al.constant(0.5), lowered=True)
    assert "frame while/body/while" in lowered.svg()
    assert picture.source == pictures.to_dot(_graph())


@needs_graphviz
def test_a_picture_saves_itself_in_the_format_its_extension_names(tmp_path):
    picture = al.visualize(nested3, al.constant(4), al.constant(0.5))
    for name, start in (("g.svg", b"<?xml"), ("g.png", b"\x89PNG"), ("g.pdf", b"%PDF")):
        picture.save(tmp_path / name)
        assert (tmp_path / name).read_bytes().startswith(start), name
    assert picture.png().startswith(b"\x89PNG") and picture.pdf().startswith(b"%PDF")
    with pytest.raises(ValueError, match=r"save writes .svg, .png, .pdf files; '.*g.gif' has .gif: name the file"):
        picture.save(tmp_path / "g.gif")


@needs_graphviz
def test_the_command_line_writes_png_bytes():
    result = subprocess.run([sys.executable, "-m", "autoloop", "graph", f"{ROOT}/samples/sum_square_autograph.py::sumSquare",
                             "--args", "[10]", "--format", "png"], capture_output=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"\x89PNG")


@needs_graphviz
def test_a_three_level_loop_fits_1600_pixels():
    png = pictures.render(pictures.to_dot(_graph()), "png")
    width = int.from_bytes(png[16:20], "big")  # the PNG header's width, at Graphviz's 96 dpi
    assert width <= 1600


@needs_graphviz
def test_the_command_line_draws_svg():
    result = subprocess.run([sys.executable, "-m", "autoloop", "graph", f"{ROOT}/samples/sum_square_autograph.py::sumSquare",
                             "--args", "[10]", "--format", "svg", "--lowered"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "<svg" in result.stdout and "frame while" in result.stdout


@pytest.mark.skipif(not HAVE_PACKAGE, reason="needs the graphviz package (pip install 'autoloop[graph]')")
def test_without_dot_the_command_line_says_how_to_install_it():
    environment = dict(os.environ, PATH=os.path.dirname(sys.executable))  # python, but no dot
    result = subprocess.run([sys.executable, "-m", "autoloop", "graph", f"{ROOT}/samples/sum_square_autograph.py::sumSquare",
                             "--args", "[10]", "--format", "svg"], capture_output=True, text=True, env=environment)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "autoloop: error: drawing graphs needs Graphviz's dot program: install Graphviz (apt-get install graphviz, "
        "brew install graphviz, or https://graphviz.org/download/)"]


def test_without_the_package_drawing_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz now fails
    with pytest.raises(pictures.GraphvizMissing, match=r"pip install 'autoloop\[graph\]'"):
        al.visualize(nested3, al.constant(4), al.constant(0.5))
