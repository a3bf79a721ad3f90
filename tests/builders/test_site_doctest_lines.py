"""A failing snippet is reported at its own line, also inside an exercise answer (an indented block)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCS_CONFTEST = Path(__file__).resolve().parents[2] / "docs" / "conftest.py"

PAGE = """# T

1. A question?

    ??? success "Answer"
        Some text.

        ```python
        >>> 1 + 1
        2
        >>> 2 + 2
        5
        ```

        ```python
        x = 1
        raise ValueError("in a code block of the answer")
        ```

```python
>>> 3 + 3
7
```
"""


@pytest.mark.process
def test_failing_examples_are_reported_at_their_line_and_column(tmp_path):
    (tmp_path / "page.md").write_text(PAGE)
    shutil.copy(DOCS_CONFTEST, tmp_path / "conftest.py")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "page.md", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    out = proc.stdout
    assert proc.returncode == 1, out
    # The second example of the answer is on line 11, indented by 8: Sybil alone said line 9, column 90.
    assert "page.md, line 11, column 9 did not evaluate as expected" in out, out
    assert "page.md, line 21, column 1 did not evaluate as expected" in out, out
    # A code block's traceback names the page line of the raising statement.
    assert "page.md:17: ValueError" in out and "page.md::line:15,column:9 - ValueError" in out, out
    assert "3 failed, 1 passed" in out, out
