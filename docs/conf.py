"""Sphinx configuration of dynid's documentation: the Markdown pages of docs/ (MyST) and an API reference
from the docstrings (autodoc, autosummary). Build with ``make docs`` (into docs/_build/html)."""

import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent / 'src'))  # the package as checked out, without installing it

project = 'dynid'
author = 'dynid maintainers'
copyright = 'dynid maintainers'  # noqa: A001 (Sphinx's name)

extensions = [
    'myst_parser',
    'sphinx.ext.autodoc',
    'sphinx.ext.autosummary',
    'sphinx.ext.mathjax',
    'sphinx.ext.napoleon',
]

root_doc = 'README'  # docs/README.md: the index GitHub shows too
source_suffix = {'.md': 'markdown', '.rst': 'restructuredtext'}
exclude_patterns = ['_build']
templates_path = ['_templates']

myst_enable_extensions = ['dollarmath']
myst_heading_anchors = 4  # links to '#a-heading' resolve as on GitHub

autosummary_generate = True
# autosummary writes a page per module into _autosummary/ but never removes one: a page of a module since moved
# or renamed would fail the build (-W). The folder is generated output; each build starts without it.
shutil.rmtree(DOCS / '_autosummary', ignore_errors=True)
# A package's __all__ re-exports its modules' names: each is documented once, in its own module.
autodoc_default_options = {'members': True, 'show-inheritance': True, 'ignore-module-all': True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # an 'Attributes:' entry beside a property of the same name is one object
autodoc_typehints = 'description'
autodoc_member_order = 'bysource'
# Importable without a ROS 2 installation or the optional services (Read the Docs, a bare checkout).
autodoc_mock_imports = ['rclpy', 'std_msgs', 'std_srvs', 'sensor_msgs', 'trajectory_msgs', 'diagnostic_msgs',
                        'rcl_interfaces', 'lifecycle_msgs', 'builtin_interfaces', 'ament_index_python', 'ur_msgs',
                        'launch', 'launch_ros', 'mujoco', 'psycopg', 'dask', 'distributed']

html_theme = 'alabaster'
html_title = 'dynid'
html_static_path = []
html_additional_pages = {'index': 'redirect.html'}  # index.html opens the root page, README.html

# The pages the site's navigation holds, in reading order. They are appended to the root page as a toctree
# when Sphinx reads it, so that docs/README.md stays a plain index on GitHub.
PAGES = ['tutorial', 'ros2', 'contract', 'logs', 'health', 'fleet', 'nodes/README', 'nodes/parameters',
         'backends/twin', 'backends/ur', 'backends/franka', 'backends/gazebo', 'backends/mujoco',
         'methods/identification', 'methods/diagnosis', 'methods/estimation', 'methods/health',
         'methods/feedforward', 'methods/payload', 'methods/contact', 'benchmarks', 'code_map', 'api']


# benchmarks/README.md lies outside docs/; the site holds it as the page 'benchmarks' (docs/benchmarks.md
# includes it), so the pages' links to it go there.
BENCHMARKS_LINK = re.compile(r'\]\(\.\./((?:\.\./)*)benchmarks/README\.md')


def _complete(app, docname, source):
    """The root page gets the site's toctree; links to benchmarks/README.md go to its page in the site."""
    source[0] = BENCHMARKS_LINK.sub(r'](\1benchmarks.md', source[0])
    if docname == root_doc:
        source[0] += '\n\n```{toctree}\n:hidden:\n:maxdepth: 2\n\n' + '\n'.join(PAGES) + '\n```\n'


LITERAL = re.compile(r'(``.*?``)')


def _escape_bars(app, what, name, obj, options, lines):
    """|x| is an absolute value in dynid's docstrings (plain-text formulas), not a reST substitution."""
    for i, line in enumerate(lines):
        if '|' in line and not line.lstrip().startswith(('| ', '+-', '+=')):
            lines[i] = ''.join(part if part.startswith('``') else part.replace('|', r'\|')
                               for part in LITERAL.split(line))


def setup(app):
    app.connect('source-read', _complete)
    app.connect('autodoc-process-docstring', _escape_bars)
