/* Agreement page: shade the annotator x annotator matrix (data-metric, data-lower-is-better). */
(function () {
  "use strict";
  var matrix = document.getElementById("matrix");
  if (!matrix || matrix.getAttribute("data-metric") === "n") return;
  var lowerIsBetter = matrix.getAttribute("data-lower-is-better") === "true";
  matrix.querySelectorAll("td.cell").forEach(function (td) {
    var raw = td.getAttribute("data-value");
    if (raw === "") return;
    var v = Number(raw);
    var strength = lowerIsBetter ? Math.max(0, 1 - v / 3) : Math.max(0, Math.min(1, v));
    td.style.background = "rgba(31, 138, 76, " + (0.08 + 0.6 * strength).toFixed(2) + ")";
    if (strength > 0.7) td.style.color = "#fff";
  });
})();
