// Typesets TeX to MathJax SVG for the site build, in one long-lived process.
//
// Started by rnnmem.site.mathjax; reads one JSON request per line on stdin and
// answers each with one JSON line on stdout:
//
//   {"formulas": [[tex, display], ...]}  ->  {"html": ["<mjx-container ...>", ...], "glyphs": "<svg ...>"}
//                                             or {"error": message, "index": i}
//   {"stylesheet": true}                 ->  {"css": "..."}
//
// One request is one page. Its formulas draw each glyph with <use> from the page's
// glyph cache ("glyphs": a hidden <svg> holding every glyph's path once, MathJax's
// global font cache), so no font is downloaded and a glyph's outline is sent once a page.
// Each formula keeps its MathML in <mjx-assistive-mml> for screen readers.
// TeX errors are reported, never typeset as red error boxes.
"use strict";

const readline = require("readline");
const {mathjax} = require("mathjax-full/js/mathjax.js");
const {TeX} = require("mathjax-full/js/input/tex.js");
const {SVG} = require("mathjax-full/js/output/svg.js");
const {liteAdaptor} = require("mathjax-full/js/adaptors/liteAdaptor.js");
const {RegisterHTMLHandler} = require("mathjax-full/js/handlers/html.js");
const {AssistiveMmlHandler} = require("mathjax-full/js/a11y/assistive-mml.js");
const {AllPackages} = require("mathjax-full/js/input/tex/AllPackages.js");

// The metrics a browser measures for the book's body text (16 px, ex about half an em).
// SVG sizes are written in ex, so a formula takes the x-height of the text around it.
const METRICS = {em: 16, ex: 8, containerWidth: 1280};

// The packages MathJax's browser build loads or autoloads, as the book was written against:
// not textmacros (it reads "_" in \text{} as an error), and none that hides TeX errors.
const EXCLUDED = new Set(["noundefined", "noerrors", "textmacros"]);

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));

const output = new SVG({fontCache: "global"});

function newDocument() {
  // A fresh TeX input per page: macros and equation labels do not leak between pages.
  const tex = new TeX({
    packages: AllPackages.filter((name) => !EXCLUDED.has(name)),
    formatError: (jax, err) => { throw err; },
  });
  return mathjax.document("", {InputJax: tex, OutputJax: output});
}

function typeset(formulas) {
  const doc = newDocument();
  output.clearFontCache();  // the page's own glyphs only
  const html = [];
  for (let i = 0; i < formulas.length; i++) {
    const [tex, display] = formulas[i];
    try {
      html.push(adaptor.outerHTML(doc.convert(tex, {display: Boolean(display), ...METRICS})));
    } catch (err) {
      return {error: String(err && err.message ? err.message : err), index: i};
    }
  }
  const cache = output.svg("svg", {id: SVG.FONTCACHEID, style: {display: "none"}}, [output.fontCache.getCache()]);
  return {html, glyphs: adaptor.outerHTML(cache)};
}

function answer(request) {
  if (request.formulas) return typeset(request.formulas);
  if (request.stylesheet) return {css: adaptor.textContent(output.styleSheet(newDocument()))};
  return {error: "unknown request: " + JSON.stringify(Object.keys(request))};
}

const lines = readline.createInterface({input: process.stdin, terminal: false});
lines.on("line", (line) => {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (err) {
    reply = {error: String(err && err.stack ? err.stack : err)};
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
// The build closed the pipe (it finished, or gave up waiting: rnnmem.site.mathjax's timeout): stop.
lines.on("close", () => process.exit(0));
