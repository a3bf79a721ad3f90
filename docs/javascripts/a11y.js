// Accessibility fixes for what Material's own scripts add to a page, after every
// (instant-navigation) page change:
// * the small bar Material puts in each code block (the copy button) is a <nav>,
//   which would make every code block a navigation landmark of the same name: it
//   loses the landmark role (the button keeps its own name);
// * a block that scrolls sideways (code, a table, a long equation, a notebook
//   cell) can be reached from the keyboard and scrolled with the arrow keys;
// * the article's blocks, left out of the first paint while off the screen, are
//   given their drawn height while the browser is idle.
(function () {
  const SCROLLERS = "pre > code, .md-typeset__scrollwrap, .arithmatex, .highlight-ipynb, .jp-OutputArea-output pre";

  function fixCodeToolbars(root) {
    root.querySelectorAll("nav.md-code__nav:not([role])").forEach((nav) => {
      nav.setAttribute("role", "none");
    });
  }

  // The article's blocks off the screen are left out of layout (content-visibility in
  // book.css), so the first paint handles one screen of them, and the browser draws each
  // when it nears the screen. Until then a block stands in at a guessed height, so what
  // follows it sits in the wrong place: a script that reads positions (a screen reader's
  // or an accessibility checker's) would find text on top of the footer. So, one at a
  // time, top to bottom, while the browser is idle, each block the browser may skip is
  // laid out once as it will be drawn (the class rnnmem-measure), and its height becomes
  // its stand-in height (contain-intrinsic-size); the blocks that may scroll inside it are
  // measured then, as whether a block scrolls needs its layout. It stays undrawn: only its
  // box is placed, and the browser does not repaint the whole chapter for every block, as
  // drawing them all would make it do. Then any block that may scroll and was not measured
  // yet is. When all are done, <html> gets data-rnnmem-scrollers="done" (the browser tests
  // wait for it).
  // The list of exercises (class rnnmem-units) is sized an item at a time: laid out whole, it
  // would be one long task (rnnmem.site.speed).
  const BLOCKS = ".md-content__inner > *, .md-content__inner > .rnnmem-units > li";
  // At most this long a slice of idle time (ms): a phone four times slower still gets its
  // tasks back within 50 ms, the limit past which a task holds up a reader's input. A slice
  // ends only after the block it is sizing, and one large block (a long table of formulas)
  // takes a few milliseconds itself: with slices of 10 ms, Chromium at 4x CPU showed tasks
  // of 70-80 ms on the longest chapter; hence 4.
  const SLICE_MS = 4;
  let pending = [], scheduled = false, afterDone = [];
  const idle = window.requestIdleCallback || ((work) => setTimeout(() => work({timeRemaining: () => 5}), 1));

  const EDGES = ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"];

  // The scrollers whose width has been read while laid out as drawn (by size, or by a
  // measure of their own): the pass over the scrollers that follows the blocks' leaves
  // them be, as reading one again inside an undrawn block would lay that block out again.
  let measured = new WeakSet();

  function size(block) {
    if (!block.isConnected || block.classList.contains("rnnmem-sized")) return;
    // A list sized by its items: its own scrollers are theirs, read as each item is sized.
    if (block.classList.contains("rnnmem-units")) {
      block.classList.add("rnnmem-sized");
      return;
    }
    // A block the browser never skips (a heading, a tabbed set, a block that scrolls) has
    // its own height already: only its scrollers are read, without laying it out anew.
    if (getComputedStyle(block).contentVisibility === "auto") {
      block.classList.add("rnnmem-measure");
      const style = getComputedStyle(block);
      const height = block.getBoundingClientRect().height - EDGES.reduce((sum, edge) => sum + parseFloat(style[edge]), 0);
      // Whether a block inside scrolls is read here, while it is laid out as drawn.
      block.querySelectorAll(SCROLLERS).forEach(measure);
      block.classList.remove("rnnmem-measure");
      // The stand-in height is that of the block's content box (padding and border add to it);
      // without "auto", as the size the browser remembers from the block's last drawing may
      // be older (a font has arrived since).
      block.style.containIntrinsicSize = Math.max(0, height) + "px";
    } else {
      block.querySelectorAll(SCROLLERS).forEach(measure);
    }
    block.classList.add("rnnmem-sized");
  }

  function measure(el) {
    if (el.isConnected && !el.hasAttribute("tabindex") && el.scrollWidth > el.clientWidth + 1) {
      el.setAttribute("tabindex", "0");
    }
    measured.add(el);
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
      afterDone.splice(0).forEach((callback) => callback());
    }
  }

  function schedule(root) {
    document.documentElement.removeAttribute("data-rnnmem-scrollers");
    const blocks = [...root.querySelectorAll(BLOCKS)].map((block) => () => size(block));
    const scrollers = [...root.querySelectorAll(SCROLLERS)].map((el) => () => measured.has(el) || measure(el));
    pending = blocks.concat(scrollers);
    if (!pending.length) {
      document.documentElement.setAttribute("data-rnnmem-scrollers", "done");
      afterDone.splice(0).forEach((callback) => callback());
    } else if (!scheduled) {
      scheduled = true;
      idle(workSome);
    }
  }

  function fix() {
    fixCodeToolbars(document);
    schedule(document);
  }

  // Material adds the code toolbars as it mounts each block, when the block first comes
  // into view: catch them as they come, and measure the code again (the toolbar narrows
  // it). On a screen without hover Material takes a wide block's tabindex away, which a
  // phone with a keyboard still needs: a tabindex removed is measured for again.
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "attributes") {
        if (record.attributeName === "tabindex" && record.target.matches(SCROLLERS)) {
          measure(record.target);
        }
        continue;
      }
      for (const node of record.addedNodes) {
        if (node.nodeType === 1 && (node.matches("nav.md-code__nav") || node.querySelector("nav.md-code__nav"))) {
          fixCodeToolbars(node.parentNode || document);
          const code = node.parentNode && node.parentNode.querySelector(":scope > code");
          if (code) measure(code);
        }
      }
    }
  }).observe(document.body, {childList: true, subtree: true, attributes: true, attributeFilter: ["tabindex"]});

  if (window.document$) {
    document$.subscribe(fix);
  } else {
    fix();
  }
  function sizeAgain() {
    measured = new WeakSet();
    document.querySelectorAll(".md-content__inner .rnnmem-sized").forEach((block) => block.classList.remove("rnnmem-sized"));
    schedule(document);
  }

  // A new width changes the blocks' heights: the blocks are sized again. (The site loads no
  // font: text is set in the reader's own fonts and math is drawn as SVG outlines, so no
  // font arriving late can change a height.) A phone's address bar coming and going changes
  // only the height of the window.
  // A new palette restyles the page, but the browser leaves an undrawn block's style as it
  // was until the block is drawn: the blocks are laid out again, so their styles follow,
  // and the palette's switch ends (transitions back on) when they are done
  // (theme/partials/javascripts/palette.html calls this).
  window.rnnmemAfterPaletteSwitch = (callback) => {
    afterDone.push(callback);
    sizeAgain();
  };

  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth !== width) {
      width = window.innerWidth;
      sizeAgain();
    } else {
      schedule(document);
    }
  });
})();
