/* Error-geometry and step-surprisal pages: live progress (RealMath.poll; the run page reloads
   once when its run ends), and the figures, drawn with the vendored Chart.js from the results
   JSON (json_script "geometry-data"); the heatmaps are drawn on a plain canvas. Every figure of a
   lexical-baseline run says so in its title. */
(function () {
  "use strict";
  var RM = window.RealMath;
  var gettext = window.gettext || function (text) { return text; };
  // The page's words, in one place (gettext: the JS translation catalog). The lexical label is
  // the JSON's own label ("lexical baseline, not semantic"), shown in the reader's language.
  var T = {
    lexical: gettext("lexical baseline, not semantic"),
    stalled: gettext("Running · no progress for a while: is a worker running?"),
    density: gettext("density"),
    dispersion: gettext("local dispersion"),
    component: gettext("principal component"),
    cumulative: gettext("cumulative explained variance"),
    silhouette: gettext("silhouette"),
    components: gettext("GMM components k"),
    bic: gettext("BIC"),
    surprisal: gettext("surprisal (nats/token)"),
    ll: gettext("logical likelihood")
  };
  var ANALYSIS = {
    waiting: gettext("Waiting for data"), running: gettext("Analysing"), done: gettext("Analysed"),
    failed: gettext("Analysis failed"), cancelled: gettext("Analysis cancelled")
  };
  function status(code) { return RM && RM.statusLabel ? RM.statusLabel(code) : code; }
  function analysis(code) { return Object.prototype.hasOwnProperty.call(ANALYSIS, code) ? ANALYSIS[code] : code; }
  var COLORS = { human: "#2b6cb0", synthetic: "#805ad5", "probe-derived": "#c05621" };

  function follow(url, onData, reload) {
    if (!RM || !RM.poll) { return; }
    RM.poll(url, {
      every: 1000, maxDelay: 10000,
      onData: function (p) {
        onData(p);
        if (!p.finished) { return false; }
        if (reload) { window.location.reload(); }
        return true;
      }
    });
  }

  var panel = document.getElementById("geometry-progress");
  if (panel && panel.getAttribute("data-finished") === "0") {
    follow(panel.getAttribute("data-url"), function (p) {
      var set = function (id, value) { var el = document.getElementById(id); if (el) { el.textContent = value; } };
      var bar = document.getElementById("g-bar");
      if (bar) { bar.value = p.percent; }
      set("g-status", p.stalled ? T.stalled : status(p.status));
      set("g-count", p.done + " / " + p.total);
      set("g-ok", p.ok); set("g-error", p.error); set("g-analysis", analysis(p.analysis));
      var cancel = document.getElementById("cancel-button");
      var resume = document.getElementById("resume-button");
      if (cancel) { cancel.disabled = !p.can_cancel; }
      if (resume) { resume.disabled = !p.can_resume; }
    }, true);
  }
  Array.prototype.forEach.call(document.querySelectorAll("#geometry-runs tr[data-status=running]"), function (row) {
    follow(row.getAttribute("data-url"), function (p) {
      var bar = row.querySelector("progress");
      if (bar) { bar.value = p.percent; }
      var done = row.querySelector(".run-done");
      if (done) { done.textContent = p.done + " / " + p.total; }
      var cell = row.querySelector(".run-status");
      if (cell) { cell.textContent = status(p.status); }
      var state = row.querySelector(".run-analysis");
      if (state) { state.textContent = analysis(p.analysis); }
    }, false);
  });

  var node = document.getElementById("geometry-data");
  var results = node ? JSON.parse(node.textContent) : null;
  var section = document.getElementById("geometry-results");
  if (!results || !section || !window.Chart) { return; }
  var lexical = section.getAttribute("data-lexical") === "1";
  var groups = Object.keys(results.groups || {});

  function title(text) { return { display: true, text: lexical ? text + " (" + T.lexical + ")" : text }; }

  function lines(id, text, xLabel, yLabel, series) {
    var canvas = document.getElementById(id);
    if (!canvas) { return; }
    new window.Chart(canvas, {
      type: "line",
      data: { datasets: series.filter(function (s) { return s.points.length; }).map(function (s) {
        return { label: s.name, data: s.points, borderColor: COLORS[s.name] || "#4a5568", pointRadius: 0, tension: 0.2 };
      }) },
      options: { maintainAspectRatio: false, animation: false, parsing: false,
        plugins: { title: title(text) },
        scales: { x: { type: "linear", title: { display: true, text: xLabel } }, y: { title: { display: true, text: yLabel } } } }
    });
  }

  function curve(d) { return (d && d.x ? d.x : []).map(function (x, i) { return { x: x, y: d.y[i] }; }); }

  if (section.getAttribute("data-kind") === "geometry") {
    lines("fig-density", T.dispersion, T.dispersion, T.density, groups.map(function (g) {
      return { name: g, points: curve(results.groups[g].dispersion_density) };
    }));
    lines("fig-variance", T.cumulative, T.component, T.cumulative, groups.map(function (g) {
      return { name: g, points: (results.groups[g].cumulative_variance || []).map(function (v, i) { return { x: i + 1, y: v }; }) };
    }));
    lines("fig-bic", T.bic, T.components, T.bic, groups.map(function (g) {
      var bic = (results.groups[g].gmm || {}).bic || {};
      return { name: g, points: Object.keys(bic).map(function (k) { return { x: Number(k), y: bic[k] }; }) };
    }));
    var canvas = document.getElementById("fig-silhouette");
    if (canvas) {
      new window.Chart(canvas, {
        type: "bar",
        data: { datasets: groups.map(function (g) {
          var values = (results.groups[g].silhouette_values || []).slice().sort(function (a, b) {
            return a[0] - b[0] || b[1] - a[1];
          });
          return { label: g, backgroundColor: COLORS[g], data: values.map(function (v, i) { return { x: i, y: v[1] }; }) };
        }) },
        options: { maintainAspectRatio: false, animation: false, parsing: false,
          plugins: { title: title(T.silhouette) },
          scales: { x: { type: "linear", display: false }, y: { min: -1, max: 1, title: { display: true, text: T.silhouette } } } }
      });
    }
    Array.prototype.forEach.call(document.querySelectorAll("canvas.heatmap"), function (canvas) {
      var matrix = ((results.groups[canvas.getAttribute("data-group")] || {}).heatmap || {}).matrix || [];
      var n = matrix.length;
      if (!n) { return; }
      canvas.width = n; canvas.height = n;
      var context = canvas.getContext("2d");
      var image = context.createImageData(n, n);
      var largest = 0;
      matrix.forEach(function (row) { row.forEach(function (v) { largest = Math.max(largest, v); }); });
      matrix.forEach(function (row, i) {
        row.forEach(function (v, j) {
          var shade = Math.round(255 * (largest ? v / largest : 0));
          var at = 4 * (i * n + j);
          image.data[at] = shade; image.data[at + 1] = shade; image.data[at + 2] = 255; image.data[at + 3] = 255;
        });
      });
      context.putImageData(image, 0, 0);
    });
  } else {
    lines("fig-surprisal", T.surprisal, T.surprisal, T.density, groups.map(function (g) {
      return { name: g, points: curve(results.groups[g].surprisal.density) };
    }));
    lines("fig-ll", T.ll, T.ll, T.density, groups.map(function (g) {
      return { name: g, points: curve(results.groups[g].ll.density) };
    }));
  }
})();
