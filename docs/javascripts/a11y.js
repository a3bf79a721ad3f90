// Accessibility fixes for what Material's own scripts add to a page, after every
// (instant-navigation) page change:
// * the small bar Material puts in each code block (the copy button) is a <nav>,
//   which would make every code block a navigation landmark of the same name: it
//   loses the landmark role (the button keeps its own name);
// * a block that scrolls sideways (code, a table, a long equation, a notebook
//   cell) can be reached from the keyboard and scrolled with the arrow keys;
// * the article's blocks, left out of the first paint while off the screen, are
//   drawn while the browser is idle.
(function () {
  const SCROLLERS = "pre > code, .md-typeset__scrollwrap, .arithmatex, .highlight-ipynb, .jp-OutputArea-output pre";

  function fixCodeToolbars(root) {
    root.querySelectorAll("nav.md-code__nav:not([role])").forEach((nav) => {
      nav.setAttribute("role", "none");
    });
  }

  // The article's blocks off the screen are left out of layout until they are drawn
  // (content-visibility in book.css), so the first paint handles one screen of them. They
  // are drawn one at a time, top to bottom, while the browser is idle, never in one long
  // task that would hold up the page; then the blocks that may scroll are measured, as
  // whether a block scrolls needs its layout. When all are done, <html> gets
  // data-rnnmem-scrollers="done" (the browser tests wait for it).
  const BLOCKS = ".md-content__inner > *";
  // At most this long a slice of idle time (ms): a phone four times slower still gets its
  // tasks back within 50 ms, the limit past which a task holds up a reader's input.
  const SLICE_MS = 10;
  let pending = [], scheduled = false;
  const idle = window.requestIdleCallback || ((work) => setTimeout(() => work({timeRemaining: () => 5}), 1));

  function draw(block) {
    if (block.isConnected && !block.classList.contains("rnnmem-drawn")) {
      block.classList.add("rnnmem-drawn");
      block.getBoundingClientRect();  // lay it out now, inside this slice of idle time
    }
  }

  function measure(el) {
    if (el.isConnected && !el.hasAttribute("tabindex") && el.scrollWidth > el.clientWidth + 1) {
      el.setAttribute("tabindex", "0");
    }
  }

  function workSome(deadline) {
    const stop = performance.now() + Math.min(SLICE_MS, deadline.timeRemaining());
    while (pending.length) {
      pending.shift()();
      if (performance.now() >= stop) break;
    }
    if (pending.length) {
      idle(workSome);
    } else {
      scheduled = false;
      document.documentElement.setAttribute("data-rnnmem-scrollers", "done");
    }
  }

  function schedule(root) {
    document.documentElement.removeAttribute("data-rnnmem-scrollers");
    const blocks = [...root.querySelectorAll(BLOCKS)].map((block) => () => draw(block));
    pending = blocks.concat([...root.querySelectorAll(SCROLLERS)].map((el) => () => measure(el)));
    if (!pending.length) {
      document.documentElement.setAttribute("data-rnnmem-scrollers", "done");
    } else if (!scheduled) {
      scheduled = true;
      idle(workSome);
    }
  }

  function fix() {
    fixCodeToolbars(document);
    schedule(document);
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
  window.addEventListener("resize", () => schedule(document));
})();
