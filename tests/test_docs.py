"""README and docs/ stand alone: every link resolves inside the repository, and the
quick start makes a virtual environment before it installs anything."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def links(document: pathlib.Path):
    text = FENCE.sub("", document.read_text())  # code blocks hold no links
    return LINK.findall(text)


def anchors(document: pathlib.Path) -> set:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    text = FENCE.sub("", document.read_text())
    found = set()
    for heading in re.findall(r"^#+\s+(.*)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves_inside_the_repository(document):
    assert links(document) or document.parent != ROOT or document.name == "CHANGELOG.md", \
        f"{document} has no links to check"
    for target in links(document):
        if re.match(r"[a-z]+:", target):
            continue  # an outside address (https:, mailto:)
        path, _, anchor = target.partition("#")
        resolved = (document.parent / path).resolve() if path else document
        assert resolved.is_relative_to(ROOT), f"{document.name}: {target} points outside the repository"
        assert resolved.exists(), f"{document.name}: {target} does not exist"
        if anchor:
            assert anchor in anchors(resolved), f"{document.name}: {target}: no heading #{anchor}"


def test_no_document_or_code_refers_to_files_outside_the_repository():
    checked = DOCUMENTS + sorted(ROOT.glob("autoloop/**/*.py")) + sorted(ROOT.glob("samples/*.py"))
    offenders = [str(p.relative_to(ROOT)) for p in checked if "../shared" in p.read_text()]
    assert not offenders


def test_readme_links_the_reference_the_design_and_the_walkthrough():
    targets = set(links(ROOT / "README.md"))
    assert {"docs/api.md", "docs/design.md", "docs/walkthrough.py"} <= targets


def test_quick_start_makes_a_virtual_environment_before_installing():
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line for line in re.findall(r"```sh\n(.*?)```", quick_start, re.S)[0].splitlines()
                if line and not line.startswith("#")]
    assert commands[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert any(c.startswith("pip install . && autoloop run samples/") for c in commands[1:])
    assert any(c.startswith("pip install '.[test]' && python -m pytest") for c in commands[1:])
