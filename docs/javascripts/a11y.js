// Accessibility fixes for what Material's own scripts add to a page, after every
// (instant-navigation) page change:
// * the small bar Material puts in each code block (the copy button) is a <nav>,
//   which would make every code block a navigation landmark of the same name: it
//   loses the landmark role (the button keeps its own name);
// * a block that scrolls sideways (code, a table, a long equation, a notebook
//   cell) can be reached from the keyboard and scrolled with the arrow keys.
(function () {
  const SCROLLERS = "pre > code, .md-typeset__scrollwrap, .arithmatex, .highlight-ipynb, .jp-OutputArea-output pre";

  function fixCodeToolbars(root) {
    root.querySelectorAll("nav.md-code__nav:not([role])").forEach((nav) => {
      nav.setAttribute("role", "none");
    });
  }

  function fixScrollers(root) {
    // All reads first, then all writes: one layout, not one per block.
    const scrolling = [...root.querySelectorAll(SCROLLERS)]
      .filter((el) => !el.hasAttribute("tabindex") && el.scrollWidth > el.clientWidth + 1);
    scrolling.forEach((el) => el.setAttribute("tabindex", "0"));
  }

  function fix() {
    fixCodeToolbars(document);
    fixScrollers(document);
  }

  // Material adds the code toolbars as it mounts each block: catch them as they come.
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType === 1 && (node.matches("nav.md-code__nav") || node.querySelector("nav.md-code__nav"))) {
          fixCodeToolbars(node.parentNode || document);
        }
      }
    }
  }).observe(document.body, {childList: true, subtree: true});

  if (window.document$) {
    document$.subscribe(fix);
  } else {
    fix();
  }
  window.addEventListener("resize", () => fixScrollers(document));
})();
