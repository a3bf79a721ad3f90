/* Interactive figures (rnnmem.site.widgets): every state was computed when the site was built.
 * This script only reads the controls' positions, looks up the state of each layer for them and
 * writes it into the page: readout texts, polyline points, marker positions, the attributes of the
 * plot's dots, lines and texts, and each slider's spoken value. Without it the page shows the
 * starting state and the controls stay disabled. */
(function () {
  "use strict";

  function each(root, selector, fn) {
    root.querySelectorAll(selector).forEach(fn);
  }

  function byData(root, attribute) {
    var out = {};
    each(root, "[" + attribute + "]", function (el) { out[el.getAttribute(attribute)] = el; });
    return out;
  }

  function setUp(root) {
    if (root.dataset.ready) return;
    var dataNode = root.querySelector("script.rnnmem-w-data");
    if (!dataNode) return;
    var data = JSON.parse(dataNode.textContent);
    var outputs = byData(root, "data-key");
    var curves = byData(root, "data-curve");
    var marks = byData(root, "data-mark");
    var shapes = byData(root, "data-shape");
    var values = byData(root, "data-value");
    var sizes = {};
    data.controls.forEach(function (c) { sizes[c.key] = c.labels.length; });

    function position(c) {
      var i;
      if (c.kind === "slider") {
        i = Number(root.querySelector('input[type=range][data-control="' + c.key + '"]').value);
      } else {
        var on = root.querySelector('input[type=radio][data-control="' + c.key + '"]:checked');
        i = on ? Number(on.value) : 0;
      }
      return Math.max(0, Math.min(c.labels.length - 1, i | 0));
    }

    function points(key, value) {
      if (typeof value === "string") return value;
      var xs = data.xs[key], out = [];
      for (var j = 0; j < xs.length; j++) out.push(xs[j] + "," + value[j]);
      return out.join(" ");
    }

    function hide(el, hidden) {
      if (hidden) el.setAttribute("visibility", "hidden");
      else el.removeAttribute("visibility");
    }

    function apply(state) {
      var key;
      for (key in state.r || {}) if (outputs[key]) outputs[key].textContent = state.r[key];
      for (key in state.c || {}) if (curves[key]) curves[key].setAttribute("points", points(key, state.c[key]));
      for (key in state.m || {}) {
        var mark = marks[key], x = state.m[key];
        if (!mark) continue;
        hide(mark, x === null);
        if (x !== null) {
          mark.setAttribute("x1", x.toFixed(2));
          mark.setAttribute("x2", x.toFixed(2));
        }
      }
      for (key in state.s || {}) {
        var shape = shapes[key], attrs = state.s[key];
        if (!shape) continue;
        hide(shape, attrs === null);
        for (var name in attrs || {}) {
          if (name === "text") shape.textContent = attrs[name];
          else shape.setAttribute(name, attrs[name]);
        }
      }
    }

    function show() {
      var at = {};
      data.controls.forEach(function (c) {
        at[c.key] = position(c);
        var slider = root.querySelector('input[type=range][data-control="' + c.key + '"]');
        if (slider) slider.setAttribute("aria-valuetext", c.labels[at[c.key]]);
        if (values[c.key]) values[c.key].textContent = c.labels[at[c.key]];
      });
      data.layers.forEach(function (layer) {
        var index = 0;
        layer.by.forEach(function (key) { index = index * sizes[key] + at[key]; });
        apply(layer.states[index]);
      });
    }

    // An element marked data-pick="control:index" (a character of a snippet) moves that slider there
    // when a pointer rests on it or clicks it; the slider stays the keyboard's way to the same states.
    function pick(event) {
      var target = event.target && event.target.closest ? event.target.closest("[data-pick]") : null;
      if (!target || !root.contains(target)) return;
      var parts = target.getAttribute("data-pick").split(":");
      var slider = root.querySelector('input[type=range][data-control="' + parts[0] + '"]');
      if (!slider || slider.value === parts[1]) return;
      slider.value = parts[1];
      show();
    }

    each(root, "input[data-control]", function (input) { input.disabled = false; });
    root.addEventListener("pointerover", pick);
    root.addEventListener("click", pick);
    root.addEventListener("input", show);
    root.addEventListener("change", show);
    show();
    root.dataset.ready = "1";
  }

  function setUpAll() {
    document.querySelectorAll(".rnnmem-widget").forEach(setUp);
  }

  // Material's instant navigation swaps the page without a load event: it announces each page on document$.
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(setUpAll);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUpAll);
  } else {
    setUpAll();
  }
})();
