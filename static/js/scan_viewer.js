/* The scanned pages of a response beside its transcript (labelling and adjudication screens).
 *
 * Reads the pages from #scan-config: [{id, number, url, width, height, words: [[start, end, x0, y0, x1, y1]]}],
 * word boxes in pixels of the page image and offsets of the response's transcript.
 * Page switch (buttons, v / V), zoom (+ / - / f, Ctrl+wheel), pan (drag, or scroll).
 * Listens for "rm:span" events ({detail: {start, end}} or {detail: null}) from the transcript
 * (static/js/labelling.js) and outlines the OCR words of that span, switching to their page.
 */
(function () {
  "use strict";
  var configEl = document.getElementById("scan-config");
  if (!configEl) return;
  var scans = JSON.parse(configEl.textContent);
  if (!scans.length) return;

  var viewport = document.getElementById("scan-viewport");
  var stage = document.getElementById("scan-stage");
  var image = document.getElementById("scan-image");
  var boxes = document.getElementById("scan-boxes");
  var zoomLabel = document.getElementById("scan-zoom");
  var pageLabel = document.getElementById("scan-page-label");
  var correctLink = document.getElementById("scan-correct-link");
  var current = 0;
  var zoom = null; // null: fit the viewport's width; else image pixels per page pixel
  var span = null;

  function scale() {
    var page = scans[current];
    return zoom === null ? viewport.clientWidth / page.width : zoom;
  }

  function layout() {
    var page = scans[current], s = scale();
    stage.style.width = Math.round(page.width * s) + "px";
    stage.style.height = Math.round(page.height * s) + "px";
    zoomLabel.textContent = zoom === null ? "fit" : Math.round(zoom * 100) + "%";
    drawBoxes();
  }

  function show(index) {
    if (index < 0 || index >= scans.length) return;
    current = index;
    var page = scans[index];
    image.src = page.url;
    image.alt = "Scanned page " + page.number;
    pageLabel.textContent = "page " + page.number + " of " + scans.length;
    if (correctLink) correctLink.href = page.correct;
    document.querySelectorAll(".scan-page-button").forEach(function (b) {
      b.setAttribute("aria-pressed", Number(b.getAttribute("data-index")) === index ? "true" : "false");
    });
    layout();
  }

  function setZoom(value) {
    var before = scale();
    zoom = value === null ? null : Math.min(4, Math.max(0.1, value));
    var ratio = scale() / before;
    var cx = viewport.scrollLeft + viewport.clientWidth / 2, cy = viewport.scrollTop + viewport.clientHeight / 2;
    layout();
    viewport.scrollLeft = cx * ratio - viewport.clientWidth / 2;
    viewport.scrollTop = cy * ratio - viewport.clientHeight / 2;
  }

  function wordsOf(page) {
    if (!span) return [];
    return page.words.filter(function (w) { return w[0] < span.end && w[1] > span.start; });
  }

  function drawBoxes() {
    boxes.textContent = "";
    var s = scale(), words = wordsOf(scans[current]);
    words.forEach(function (w) {
      var d = document.createElement("div");
      d.className = "scan-word";
      d.style.left = (w[2] * s - 2) + "px";
      d.style.top = (w[3] * s - 2) + "px";
      d.style.width = ((w[4] - w[2]) * s + 4) + "px";
      d.style.height = ((w[5] - w[3]) * s + 4) + "px";
      boxes.appendChild(d);
    });
    return words;
  }

  function focusSpan(detail) {
    span = detail && detail.end > detail.start ? detail : null;
    if (span && !wordsOf(scans[current]).length) {
      var other = scans.findIndex(function (p) { return wordsOf(p).length > 0; });
      if (other >= 0 && other !== current) { show(other); }
    }
    var words = drawBoxes();
    if (words.length) {
      var s = scale(), w = words[0];
      var x = w[2] * s, y = w[3] * s;
      if (x < viewport.scrollLeft || x > viewport.scrollLeft + viewport.clientWidth ||
          y < viewport.scrollTop || y > viewport.scrollTop + viewport.clientHeight) {
        viewport.scrollTo({ left: x - 40, top: y - 40 });
      }
    }
    stage.setAttribute("data-highlighted", String(words.length));
  }

  function onKey(event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (window.RealMath.isTyping(target)) return;
    var form = document.getElementById("step-form");
    if (form && !form.hidden) return;
    var key = event.key, handled = true;
    if (key === "v") show((current + 1) % scans.length);
    else if (key === "V") show((current - 1 + scans.length) % scans.length);
    else if (key === "+" || key === "=") setZoom(scale() * 1.25);
    else if (key === "-") setZoom(scale() / 1.25);
    else if (key === "f") setZoom(null);
    else handled = false;
    if (handled) event.preventDefault();
  }

  function wirePan() {
    var drag = null;
    viewport.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
      viewport.setPointerCapture(e.pointerId);
      viewport.classList.add("panning");
    });
    viewport.addEventListener("pointermove", function (e) {
      if (!drag) return;
      viewport.scrollLeft = drag.left - (e.clientX - drag.x);
      viewport.scrollTop = drag.top - (e.clientY - drag.y);
    });
    function end() { drag = null; viewport.classList.remove("panning"); }
    viewport.addEventListener("pointerup", end);
    viewport.addEventListener("pointercancel", end);
    viewport.addEventListener("wheel", function (e) {
      if (!e.ctrlKey) return;
      e.preventDefault();
      setZoom(scale() * (e.deltaY < 0 ? 1.1 : 1 / 1.1));
    }, { passive: false });
  }

  document.querySelectorAll(".scan-page-button").forEach(function (b) {
    b.addEventListener("click", function () { show(Number(b.getAttribute("data-index"))); });
  });
  document.getElementById("scan-zoom-in").addEventListener("click", function () { setZoom(scale() * 1.25); });
  document.getElementById("scan-zoom-out").addEventListener("click", function () { setZoom(scale() / 1.25); });
  document.getElementById("scan-fit").addEventListener("click", function () { setZoom(null); });
  document.addEventListener("keydown", onKey);
  document.addEventListener("rm:span", function (e) { focusSpan(e.detail); });
  window.addEventListener("resize", function () { if (zoom === null) layout(); });
  wirePan();
  show(0);
})();
