/* The scanned pages of a response beside its transcript (labelling and adjudication screens),
 * in the one scan viewer (static/js/scan_viewer.js; its keys and gestures are listed there).
 *
 * Reads the pages from #scan-config: [{id, number, url, width, height, correct,
 * words: [[start, end, x0, y0, x1, y1]]}], word boxes in pixels of the page image and offsets of
 * the response's transcript. Page switch: buttons, v / V. Listens for "rm:span" events
 * ({detail: {start, end}} or {detail: null}) from the transcript (static/js/labelling/) and
 * outlines the OCR words of that span, switching to their page.
 */
import { ScanViewer, drawBoxes } from "./scan_viewer.js";

const TEXT = {  // through the JavaScript catalogue (window.gettext / interpolate, see app.js)
  alt: (number) => window.interpolate(window.gettext("Scanned page %s"), [number]),
  pageOf: (number, total) => window.interpolate(window.gettext("page %s of %s"), [number, total])
};

const configEl = document.getElementById("scan-config");
const scans = configEl ? JSON.parse(configEl.textContent) : [];

if (scans.length) {
  const root = document.getElementById("scan-viewer");
  const frame = document.getElementById("scan-viewport");
  const stage = document.getElementById("scan-stage");
  const image = document.getElementById("scan-image");
  const boxes = document.getElementById("scan-boxes");
  const pageLabel = document.getElementById("scan-page-label");
  const correctLink = document.getElementById("scan-correct-link");
  let current = 0, span = null;

  const viewer = new ScanViewer(frame, stage, {
    zoomLabel: document.getElementById("scan-zoom"),
    autoHeight: true,
    // While a step label is being written, keys go to its form.
    keysOff: () => { const form = document.getElementById("step-form"); return !!form && !form.hidden; },
    onPage: scans.length > 1 ? (delta) => { show((current + delta + scans.length) % scans.length); } : null
  });

  const wordsOf = (page) => (span ? page.words.filter((w) => w[0] < span.end && w[1] > span.start) : []);

  function drawWords() {
    const words = wordsOf(scans[current]);
    drawBoxes(boxes, words.map((w) => ({ box: w.slice(2, 6), pad: 2 })), "scan-word");
    return words;
  }

  function show(index) {
    if (index < 0 || index >= scans.length) return;
    current = index;
    const page = scans[index];
    image.src = page.url;
    image.alt = TEXT.alt(page.number);
    pageLabel.textContent = TEXT.pageOf(page.number, scans.length);
    if (correctLink) correctLink.href = page.correct;
    root.querySelectorAll(".scan-page-button").forEach((b) => {
      b.setAttribute("aria-pressed", Number(b.getAttribute("data-index")) === index ? "true" : "false");
    });
    viewer.setPage(page.width, page.height);
    drawWords();
  }

  function focusSpan(detail) {
    span = detail && detail.end > detail.start ? detail : null;
    if (span && !wordsOf(scans[current]).length) {
      const other = scans.findIndex((p) => wordsOf(p).length > 0);
      if (other >= 0 && other !== current) show(other);
    }
    const words = drawWords();
    if (words.length) viewer.reveal(words[0].slice(2, 6));
    stage.setAttribute("data-highlighted", String(words.length));
  }

  root.querySelectorAll(".scan-page-button").forEach((b) => {
    b.addEventListener("click", () => { show(Number(b.getAttribute("data-index"))); });
  });
  viewer.bindButtons(root).bindKeys();
  document.addEventListener("rm:span", (e) => { focusSpan(e.detail); });
  show(0);
}
