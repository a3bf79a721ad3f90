// A Python session block carries, as data-copy, the code to paste into the classic
// Python prompt (written when the site is built, rnnmem.site.copytext). The theme
// copies it but trims its end, which would drop the blank line that closes a final
// `for` or `def`; set on the block's copy button, the same text is copied whole.
(function () {
  function mark(root) {
    root.querySelectorAll("[data-copy] button[data-clipboard-target]:not([data-clipboard-text])").forEach((button) => {
      button.setAttribute("data-clipboard-text", button.closest("[data-copy]").getAttribute("data-copy"));
    });
  }
  new MutationObserver((records) => {
    if (records.some((r) => [...r.addedNodes].some((n) => n.nodeType === 1 && (n.matches("button[data-clipboard-target], .md-code__nav"))))) {
      mark(document);
    }
  }).observe(document.body, {childList: true, subtree: true});
  if (window.document$) {
    document$.subscribe(() => mark(document));
  } else {
    mark(document);
  }
})();
