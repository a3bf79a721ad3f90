// MathJax 3, served from this site (copied from the npm package at build time).
// Typesets the arithmatex spans of the chapters and the Markdown cells of the
// rendered notebooks, and again after every instant-navigation page change.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    // Skip every element that has a class, unless it is one of those below; an
    // element without a class (a notebook cell's <p>) follows its parent.
    ignoreHtmlClass: "[\\w-]+",
    processHtmlClass: "arithmatex|jp-RenderedMarkdown|jp-MarkdownOutput|jp-RenderedHTMLCommon",
  },
  startup: { typeset: false },
};

document$.subscribe(() => {
  const typeset = () => {
    MathJax.startup.output.clearCache();
    MathJax.typesetClear();
    MathJax.texReset();
    return MathJax.typesetPromise();
  };
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(typeset);
  }
});
