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

  // Whether a block scrolls needs its layout: the blocks are measured a few at a time while
  // the browser is idle, not in the task that starts the page. When all are done, <html>
  // gets data-rnnmem-scrollers="done" (the browser tests wait for it).
  let pending = [], scheduled = false;
  const idle = window.requestIdleCallback || ((work) => setTimeout(() => work({timeRemaining: () => 5}), 1));

  function measure(el) {
    if (el.isConnected && !el.hasAttribute("tabindex") && el.scrollWidth > el.clientWidth + 1) {
      el.setAttribute("tabindex", "0");
    }
  }

  function measureSome(deadline) {
    const stop = performance.now() + Math.min(5, deadline.timeRemaining());
    while (pending.length) {
      measure(pending.pop());
      if (performance.now() >= stop) break;
    }
    if (pending.length) {
      idle(measureSome);
    } else {
      scheduled = false;
      document.documentElement.setAttribute("data-rnnmem-scrollers", "done");
    }
  }

  function fixScrollers(root) {
    document.documentElement.removeAttribute("data-rnnmem-scrollers");
    pending = [...root.querySelectorAll(SCROLLERS)].reverse();
    if (!pending.length) {
      document.documentElement.setAttribute("data-rnnmem-scrollers", "done");
    } else if (!scheduled) {
      scheduled = true;
      idle(measureSome);
    }
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
