/* Judge-vs-human plots (Chart.js, vendored): judge vs gold, FR_d curves, delta histogram,
   and the meta-evaluation category chart. Data come from json_script blocks on the page. */
(function () {
  "use strict";

  var COLORS = { human: "#2b6cb0", synthetic: "#805ad5" };
  var LABELS = { human: gettext("Human answers"), synthetic: gettext("Synthetic answers") };
  var CATEGORY_COLORS = { A: "#c05621", B: "#2b6cb0", C: "#6b46c1", D: "#2f855a", E: "#718096" };

  function readJson(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }

  function sources(obj) {
    return Object.keys(obj || {}).filter(function (k) { return COLORS[k]; }).sort();
  }

  function scatter(canvas, data) {
    var largest = 1;
    sources(data).forEach(function (s) { data[s].forEach(function (p) { largest = Math.max(largest, p[2]); }); });
    var datasets = sources(data).map(function (s) {
      return {
        label: LABELS[s],
        data: data[s].map(function (p) { return { x: p[0], y: p[1], r: 3 + 12 * Math.sqrt(p[2] / largest), n: p[2] }; }),
        backgroundColor: alpha(COLORS[s], 0.45),
        borderColor: COLORS[s]
      };
    });
    var max = 0;
    sources(data).forEach(function (s) { data[s].forEach(function (p) { max = Math.max(max, p[0], p[1]); }); });
    datasets.push({ type: "line", label: gettext("judge = gold"), data: [{ x: 0, y: 0 }, { x: max, y: max }],
      borderColor: "#a0aec0", borderDash: [4, 4], pointRadius: 0, fill: false });
    return new Chart(canvas, {
      type: "bubble",
      data: { datasets: datasets },
      options: {
        maintainAspectRatio: false, animation: false,
        scales: { x: { title: { display: true, text: gettext("gold score") }, min: 0 }, y: { title: { display: true, text: gettext("judge score") }, min: 0 } },
        plugins: { tooltip: { callbacks: { label: function (c) {
          var p = c.raw; return (c.dataset.label || "") + ": " + interpolate(gettext("gold %s, judge %s"), [p.x, p.y]) +
            (p.n ? " " + interpolate(ngettext("(%s answer)", "(%s answers)", p.n), [p.n]) : "");
        } } } }
      }
    });
  }

  function frCurves(canvas, data) {
    var distances = data.distances || [1, 2, 3, 4, 5];
    return new Chart(canvas, {
      type: "line",
      data: {
        labels: distances.map(function (d) { return "d = " + d; }),
        datasets: sources(data).map(function (s) {
          return { label: LABELS[s], data: data[s].map(function (v) { return v === null ? null : 100 * v; }),
            borderColor: COLORS[s], backgroundColor: alpha(COLORS[s], 0.2), tension: 0, pointRadius: 4 };
        })
      },
      options: { maintainAspectRatio: false, animation: false,
        // xgettext:no-javascript-format
        scales: { y: { min: 0, max: 100, title: { display: true, text: gettext("FR_d (% of answers with |Δ| ≥ d)") } } } }
    });
  }

  function deltaHistogram(canvas, data) {
    var edges = {};
    sources(data).forEach(function (s) { Object.keys(data[s]).forEach(function (e) { edges[e] = true; }); });
    var sorted = Object.keys(edges).map(Number).sort(function (a, b) { return a - b; });
    if (sorted.length) {  // fill the gaps so the axis is evenly spaced
      var full = [];
      for (var e = sorted[0]; e <= sorted[sorted.length - 1] + 1e-9; e += 1) full.push(Math.round(e * 1000) / 1000);
      if (full.length <= 200) sorted = full;
    }
    return new Chart(canvas, {
      type: "bar",
      data: {
        labels: sorted.map(function (e) { return (e > 0 ? "+" : "") + e; }),
        datasets: sources(data).map(function (s) {
          return { label: LABELS[s], data: sorted.map(function (e) {
            var key = Object.keys(data[s]).filter(function (k) { return Math.abs(Number(k) - e) < 1e-9; })[0];
            return key === undefined ? 0 : data[s][key];
          }), backgroundColor: alpha(COLORS[s], 0.7) };
        })
      },
      options: { maintainAspectRatio: false, animation: false,
        scales: { x: { title: { display: true, text: gettext("judge − gold (points)") } }, y: { title: { display: true, text: gettext("answers") }, beginAtZero: true } } }
    });
  }

  function categoryChart(canvas, summary, groupKey) {
    var groups = summary[groupKey] || [];
    var codes = summary.categories.map(function (c) { return c.code; });
    var horizontal = groups.length > 8;
    return new Chart(canvas, {
      type: "bar",
      data: {
        labels: groups.map(function (g) { return g.label; }),
        datasets: codes.map(function (code, i) {
          return { label: code + ". " + summary.categories[i].name, data: groups.map(function (g) { return g.counts[i]; }),
            backgroundColor: CATEGORY_COLORS[code], maxBarThickness: 56 };
        })
      },
      options: { maintainAspectRatio: false, animation: false, indexAxis: horizontal ? "y" : "x",
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12, font: { size: 11 } } } },
        scales: horizontal
          ? { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true } }
          : { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }
    });
  }

  // Per-sub-question ledger: MAE and mean signed error (judge - experts) per sub-question.
  function ledgerChart(canvas, rows) {
    return new Chart(canvas, {
      type: "bar",
      data: {
        labels: rows.map(function (r) { return r.question_label + " " + r.sub_question; }),
        datasets: [
          { label: "MAE", data: rows.map(function (r) { return r.mae; }), backgroundColor: alpha("#2b6cb0", 0.7) },
          { label: gettext("mean signed error (judge − experts)"), data: rows.map(function (r) { return r.mean_signed_error; }),
            backgroundColor: alpha("#c05621", 0.7) }
        ]
      },
      options: { maintainAspectRatio: false, animation: false, indexAxis: rows.length > 8 ? "y" : "x",
        plugins: { legend: { position: "bottom" } } }
    });
  }

  function init() {
    if (typeof Chart === "undefined") return;
    var plots = readJson("metrics-plots");
    if (plots) {
      var el;
      if ((el = document.getElementById("plot-scatter"))) scatter(el, plots.scatter || {});
      if ((el = document.getElementById("plot-fr"))) frCurves(el, plots.fr_curve || {});
      if ((el = document.getElementById("plot-delta"))) deltaHistogram(el, plots.delta_histogram || {});
    }
    var ledger = readJson("ledger-rows");
    var ledgerCanvas = document.getElementById("plot-ledger");
    if (ledger && ledger.length && ledgerCanvas) ledgerChart(ledgerCanvas, ledger);
    var summary = readJson("category-summary");
    if (summary) {
      document.querySelectorAll("canvas[data-category-group]").forEach(function (canvas) {
        categoryChart(canvas, summary, canvas.getAttribute("data-category-group"));
      });
    }
  }

  window.RealMath = window.RealMath || {};
  window.RealMath.metricsCharts = { scatter: scatter, frCurves: frCurves, deltaHistogram: deltaHistogram, categoryChart: categoryChart,
    ledgerChart: ledgerChart };
  document.addEventListener("DOMContentLoaded", init);
})();
