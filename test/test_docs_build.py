"""The documentation builds as a site (Sphinx + MyST, the API reference from the docstrings) with warnings as
errors, as ``make docs`` builds it: a broken link, a page outside the navigation or a docstring docutils
cannot read fails here."""

import runpy
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / 'docs'
TIMEOUT_S = 900.0  # ~45 s of CPU here; generous for a busy machine

pytest.importorskip('sphinx', reason='sphinx is pinned in requirements.txt')
pytest.importorskip('myst_parser', reason='myst-parser is pinned in requirements.txt')


def _build(source: Path, output: Path) -> subprocess.CompletedProcess:
    """``sphinx-build -b html -W --keep-going`` as ``make docs`` runs it, from the repository root."""
    return subprocess.run([sys.executable, '-m', 'sphinx', '-b', 'html', '-W', '--keep-going', '-q', str(source),
                           str(output)], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)


def test_the_docs_build_without_a_warning(tmp_path):
    started = time.monotonic()
    done = _build(DOCS, tmp_path / 'html')
    print(f'sphinx-build: {time.monotonic() - started:.1f} s')
    assert done.returncode == 0, done.stderr[-6000:]
    html = tmp_path / 'html'
    for page in ('README.html', 'index.html', 'tutorial.html', 'benchmarks.html', 'api.html',
                 'nodes/parameters.html', '_autosummary/dynid.model.robot.html'):
        assert (html / page).is_file(), page
    robot = (html / '_autosummary' / 'dynid.model.robot.html').read_text(encoding='utf-8')
    assert 'RobotModel' in robot and 'inverse_dynamics' in robot  # autodoc read the docstrings
    assert 'href="methods/payload.html' in (html / 'benchmarks.html').read_text(encoding='utf-8')


def test_a_broken_link_fails_the_build(tmp_path):
    """The same configuration (conf.py and its templates) on stand-in pages, a heading each, one per page of the
    navigation (the pages themselves build in the test above: building them twice more here took most of this
    test's time), with one link to a page that does not exist: the build fails and names it. The second build
    goes into the first's folder, as ``make docs`` does again after an edit: Sphinx reads again the page that
    changed."""
    source = tmp_path / 'docs'
    source.mkdir()
    shutil.copy(DOCS / 'conf.py', source / 'conf.py')
    shutil.copytree(DOCS / '_templates', source / '_templates')
    settings = runpy.run_path(str(source / 'conf.py'))  # the copy's: it clears the copy's _autosummary only
    for page in [settings['root_doc'], *settings['PAGES']]:
        (source / f'{page}.md').parent.mkdir(parents=True, exist_ok=True)
        (source / f'{page}.md').write_text(f'# {page}\n', encoding='utf-8')
    assert _build(source, tmp_path / 'html').returncode == 0  # the copy builds: what follows is the link's doing
    tutorial = source / 'tutorial.md'
    tutorial.write_text(tutorial.read_text(encoding='utf-8') + '\nSee [the missing page](no_such_page.md).\n',
                        encoding='utf-8')
    done = _build(source, tmp_path / 'html')
    assert done.returncode != 0
    assert 'no_such_page' in done.stderr
