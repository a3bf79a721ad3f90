/* Interactive figures (rnnmem.site.widgets): every state was computed when the site was built.
 * This script only looks up the state of the slider's position and writes it into the page:
 * readout texts, polyline points, marker positions and the slider's spoken value. */
(function () {
  "use strict";

  function setUp(root) {
    if (root.dataset.ready) return;
    var dataNode = root.querySelector("script.rnnmem-w-data");
    var slider = root.querySelector("input[type=range]");
    if (!dataNode || !slider) return;
    var data = JSON.parse(dataNode.textContent);
    function show(index) {
      var i = Math.max(0, Math.min(data.labels.length - 1, index | 0));
      root.querySelectorAll("output[data-key]").forEach(function (out) {
        out.textContent = data.readouts[i][out.dataset.key];
      });
      root.querySelectorAll("polyline[data-key]").forEach(function (line) {
        line.setAttribute("points", data.curves[i][line.dataset.key]);
      });
      root.querySelectorAll("line[data-key]").forEach(function (mark) {
        var x = data.marks[i][mark.dataset.key];
        if (x === null || x === undefined) {
          mark.setAttribute("visibility", "hidden");
        } else {
          mark.removeAttribute("visibility");
          mark.setAttribute("x1", x.toFixed(2));
          mark.setAttribute("x2", x.toFixed(2));
        }
      });
      slider.setAttribute("aria-valuetext", data.labels[i]);
    }
    slider.addEventListener("input", function () { show(Number(slider.value)); });
    show(Number(slider.value));
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
