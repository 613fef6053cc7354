/* Selecting a passage of the transcript: labelling it as a step (e), or sending it back to the
 * OCR correction queue as "transcript wrong here" (t). */
import { renderSteps, renderTranscript } from "./render.js";
import { changed, status } from "./saving.js";
import { page, byId } from "./state.js";
import { T } from "./text.js";
import { subQuestionAt } from "./transcript_text.js";

function pointOffset(node, offset, side) {
  const transcriptEl = byId("transcript"), chars = page.chars;
  const host = node.nodeType === 3 ? node.parentElement : node;
  if (host === transcriptEl) {
    const child = transcriptEl.childNodes[offset];
    return child && child.getAttribute ? Number(child.getAttribute("data-start")) : chars.length;
  }
  const seg = host.closest ? host.closest(".seg") : null;
  if (!seg || !transcriptEl.contains(seg)) return null;
  const start = Number(seg.getAttribute("data-start")), end = Number(seg.getAttribute("data-end"));
  if (seg.classList.contains("math-seg")) return side === "start" ? start : end;
  if (node.nodeType === 3) return start + Array.from(node.data.slice(0, offset)).length;
  return offset === 0 ? start : end;
}

// The selected passage as code-point offsets {start, end} (spaces trimmed), or null.
export function selectedSpan() {
  const transcriptEl = byId("transcript"), chars = page.chars;
  const sel = window.getSelection();
  if (!sel || !sel.rangeCount || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  if (!transcriptEl.contains(range.commonAncestorContainer) && range.commonAncestorContainer !== transcriptEl) return null;
  let start = pointOffset(range.startContainer, range.startOffset, "start");
  let end = pointOffset(range.endContainer, range.endOffset, "end");
  if (start === null || end === null) return null;
  while (start < end && /\s/.test(chars[start])) start++;
  while (end > start && /\s/.test(chars[end - 1])) end--;
  return end > start ? { start, end } : null;
}

export function openStepForm() {
  if (!page.config.editable) return;
  const span = selectedSpan();
  if (!span) { status(T.selectFirst, "bad"); return; }
  page.pendingStep = span;
  byId("step-quote").textContent = page.chars.slice(span.start, span.end).join("");
  const g = page.groups[page.focus.group];
  byId("step-sub").value = subQuestionAt(page.chars, page.math, page.groups, span.start) || (g && g.label ? g.label : "");
  byId("step-comment").value = "";
  byId("step-form").hidden = false;
  const checked = document.querySelector('input[name="step-verdict"]:checked');
  (checked || document.querySelector('input[name="step-verdict"]')).focus();
}

export function closeStepForm() {
  byId("step-form").hidden = true;
  page.pendingStep = null;
}

export function addStep() {
  const span = page.pendingStep, chars = page.chars;
  if (!span) return;
  const verdict = document.querySelector('input[name="step-verdict"]:checked').value;
  page.label.step_labels.push({
    start: span.start, end: span.end, quote: chars.slice(span.start, span.end).join(""),
    prefix: chars.slice(Math.max(0, span.start - 32), span.start).join(""),
    suffix: chars.slice(span.end, span.end + 32).join(""),
    verdict, comment: byId("step-comment").value, sub_question: byId("step-sub").value, checkpoint: null
  });
  page.label.step_labels.sort((a, b) => a.start - b.start || a.end - b.end);
  closeStepForm();
  window.getSelection().removeAllRanges();
  renderTranscript(); renderSteps(); changed();
}

export function removeStep(index) {
  if (!page.config.editable) return;
  page.label.step_labels.splice(index, 1);
  renderTranscript(); renderSteps(); changed();
}

// --- "transcript wrong here": back to the OCR correction queue ------------------------------

export function openFlagForm() {
  if (!page.config.urls.flag) return;
  const span = selectedSpan();
  if (!span) { status(T.selectWrongFirst, "bad"); return; }
  page.pendingFlag = span;
  byId("flag-quote").textContent = page.chars.slice(span.start, span.end).join("");
  byId("flag-note").value = "";
  byId("flag-form").hidden = false;
  byId("flag-note").focus();
}

export function closeFlagForm() {
  byId("flag-form").hidden = true;
  page.pendingFlag = null;
}

export function sendFlag() {
  const span = page.pendingFlag;
  if (!span) return;
  const body = { start: span.start, end: span.end, note: byId("flag-note").value };
  page.RM.sendJson(page.config.urls.flag, "POST", body).then((result) => {
    if (!result.ok) { status(result.data.detail || T.flagFailed, "bad"); return; }
    closeFlagForm();
    status(T.flagSent(result.data.quote.slice(0, 60)), "ok");
  }, () => { status(T.flagNetwork, "bad"); });
}
