"""The sentences a new chapter starts with, for its author to replace.

``make chapter`` (:mod:`rnnmem.site.scaffold`) writes them; while one is left in
a page's prose, whole or in part, the build fails and so does ``make
test-chapter`` (the rule ``placeholders`` of :mod:`rnnmem.site.check`), naming
page and line. They live here, apart from both, so that the scaffold can list
the page rules and the rules can name the scaffold's sentences.
"""

from __future__ import annotations

__all__ = ["HOME_ENTRY", "MOTIVATION", "PLACEHOLDERS"]

#: The chapter's motivation, under its title.
MOTIVATION = (
    "Replace this paragraph: what question does this chapter answer, and why does a reader of the "
    "earlier chapters need it? Two or three short paragraphs."
)
#: The chapter's entry on the home page.
HOME_ENTRY = "What the chapter computes, in a sentence."
#: Every sentence an author must replace.
PLACEHOLDERS = (MOTIVATION, HOME_ENTRY)
