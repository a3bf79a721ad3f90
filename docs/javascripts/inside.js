/* "Memory inside one sequence" (rnnmem.site.builders.lab_inside): every checkpoint's numbers and
 * coordinates were computed when the site was built. This script only copies those of the slider's
 * position into the page: the table's cells, the two plots' lines, the marker and the dots on the
 * accuracy plot, and the slider's spoken value. Without it the page shows update 0. */
(function () {
  "use strict";

  function points(xs, ys) {
    var out = [];
    for (var j = 0; j < xs.length; j++) {
      if (ys[j] !== null && ys[j] !== undefined) out.push(xs[j] + "," + ys[j]);
    }
    return out.join(" ");
  }

  function setUp(root) {
    if (root.dataset.ready) return;
    var dataNode = root.querySelector("script.rnnmem-inside-data");
    var slider = root.querySelector("input[type=range]");
    if (!dataNode || !slider) return;
    var data = JSON.parse(dataNode.textContent);
    var at = root.querySelector(".rnnmem-inside-at");
    var now = root.querySelector("[data-now]");
    function show(index) {
      var i = Math.max(0, Math.min(data.labels.length - 1, index | 0));
      root.querySelectorAll("output[data-cell]").forEach(function (out) {
        var key = out.dataset.cell.split("-");
        out.textContent = data.cells[i][Number(key[0])][Number(key[1])];
      });
      ["memory", "landing"].forEach(function (kind) {
        root.querySelectorAll("polyline[data-" + kind + "]").forEach(function (line) {
          line.setAttribute("points", points(data.xs, data[kind][i][Number(line.dataset[kind])]));
        });
      });
      root.querySelectorAll("circle[data-dot]").forEach(function (dot) {
        dot.setAttribute("cx", data.now[i]);
        dot.setAttribute("cy", data.dots[i][Number(dot.dataset.dot)]);
      });
      if (now) {
        now.setAttribute("x1", data.now[i]);
        now.setAttribute("x2", data.now[i]);
      }
      if (at) at.textContent = data.labels[i];
      slider.setAttribute("aria-valuetext", data.labels[i]);
    }
    slider.disabled = false;
    slider.addEventListener("input", function () { show(Number(slider.value)); });
    show(Number(slider.value));
    root.dataset.ready = "1";
  }

  function setUpAll() {
    document.querySelectorAll(".rnnmem-inside").forEach(setUp);
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
