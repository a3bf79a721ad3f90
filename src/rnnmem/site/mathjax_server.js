// Typesets TeX to MathJax CHTML for the site build, in one long-lived process.
//
// Started by rnnmem.site.mathjax; reads one JSON request per line on stdin and
// answers each with one JSON line on stdout:
//
//   {"formulas": [[tex, display], ...]}  ->  {"html": ["<mjx-container ...>", ...]}
//                                             or {"error": message, "index": i}
//   {"stylesheet": true}                 ->  {"css": "..."}   (every glyph used so far)
//   {"reset": true}                      ->  {"ok": true}     (forget the glyphs used)
//
// Each formula keeps its MathML in <mjx-assistive-mml> for screen readers.
// TeX errors are reported, never typeset as red error boxes.
"use strict";

const readline = require("readline");
const {mathjax} = require("mathjax-full/js/mathjax.js");
const {TeX} = require("mathjax-full/js/input/tex.js");
const {CHTML} = require("mathjax-full/js/output/chtml.js");
const {liteAdaptor} = require("mathjax-full/js/adaptors/liteAdaptor.js");
const {RegisterHTMLHandler} = require("mathjax-full/js/handlers/html.js");
const {AssistiveMmlHandler} = require("mathjax-full/js/a11y/assistive-mml.js");
const {AllPackages} = require("mathjax-full/js/input/tex/AllPackages.js");

const FONT_URL = process.argv[2] || "woff-v2";
// The metrics a browser measures for the book's body text (16 px, ex about half an em).
const METRICS = {em: 16, ex: 8, containerWidth: 1280};

// The packages MathJax's browser build loads or autoloads, as the book was written against:
// not textmacros (it reads "_" in \text{} as an error), and none that hides TeX errors.
const EXCLUDED = new Set(["noundefined", "noerrors", "textmacros"]);

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));

let output = new CHTML({fontURL: FONT_URL, adaptiveCSS: true});
let lastDocument = null;

function newDocument() {
  // A fresh TeX input per page: macros and equation labels do not leak between pages.
  const tex = new TeX({
    packages: AllPackages.filter((name) => !EXCLUDED.has(name)),
    formatError: (jax, err) => { throw err; },
  });
  lastDocument = mathjax.document("", {InputJax: tex, OutputJax: output});
  return lastDocument;
}

function typeset(formulas) {
  const doc = newDocument();
  const html = [];
  for (let i = 0; i < formulas.length; i++) {
    const [tex, display] = formulas[i];
    try {
      html.push(adaptor.outerHTML(doc.convert(tex, {display: Boolean(display), ...METRICS})));
    } catch (err) {
      return {error: String(err && err.message ? err.message : err), index: i};
    }
  }
  return {html};
}

function answer(request) {
  if (request.formulas) return typeset(request.formulas);
  if (request.stylesheet) {
    return {css: adaptor.textContent(output.styleSheet(lastDocument || newDocument()))};
  }
  if (request.reset) {
    output = new CHTML({fontURL: FONT_URL, adaptiveCSS: true});
    lastDocument = null;
    return {ok: true};
  }
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
