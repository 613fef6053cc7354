/* The labelling screen's state, shared by its modules: the page's configuration (#label-config),
 * the transcript as code points, the label being edited, focus, drafts and saving flags. */
import { activeTimer } from "./active_time.js";
import { mathRanges } from "./transcript_text.js";

export const page = {};

export function emptyLabel() {
  return { sub_scores: {}, total: null, checkpoint_marks: {}, override_reason: "", comment: "", step_labels: [] };
}

export function labelFrom(label) {
  const s = emptyLabel();
  if (!label) return s;
  Object.keys(label.sub_scores || {}).forEach((k) => { s.sub_scores[k] = String(label.sub_scores[k]); });
  s.total = label.total === null || label.total === undefined ? null : String(Number(label.total));
  s.checkpoint_marks = Object.assign({}, label.checkpoint_marks || {});
  s.override_reason = label.override_reason || "";
  s.comment = label.comment || "";
  s.step_labels = (label.step_labels || []).map((st) => ({
    start: st.start, end: st.end, quote: st.quote, prefix: st.prefix || "", suffix: st.suffix || "",
    needs_review: !!st.needs_review, verdict: st.verdict, comment: st.comment || "",
    sub_question: st.sub_question || "", checkpoint: st.checkpoint || null
  }));
  return s;
}

export function init(config) {
  Object.assign(page, {
    config,
    RM: window.RealMath,
    chars: Array.from(config.transcript),
    groups: config.groups,
    version: config.label ? config.label.version : 0,
    label: emptyLabel(),
    focus: { group: 0, checkpoint: config.groups.map(() => 0) },
    autoFilled: {},
    digitBuffer: { text: "", time: 0, group: -1 },
    draftTimer: null,
    draftPending: false,
    pendingStep: null,
    pendingFlag: null,
    busy: false,
    active: activeTimer((config.activeIdleSeconds || 60) * 1000)
  });
  page.math = mathRanges(page.chars);
  return page;
}

export function pointsOf(index) {
  const g = page.groups[index];
  return g.label === "" ? page.label.total : page.label.sub_scores[g.label];
}

export function setPoints(index, value, auto) {
  const g = page.groups[index];
  if (g.label === "") page.label.total = value === "" ? null : value;
  else if (value === "" || value === null) delete page.label.sub_scores[g.label];
  else page.label.sub_scores[g.label] = value;
  page.autoFilled[index] = !!auto;
}

export function payload() {
  const s = page.label;
  return {
    sub_scores: Object.assign({}, s.sub_scores),
    total: page.groups.length === 1 && page.groups[0].label === "" ? s.total : undefined,
    checkpoint_marks: Object.assign({}, s.checkpoint_marks),
    override_reason: s.override_reason,
    comment: s.comment,
    step_labels: s.step_labels.map((st) => ({
      start: st.start, end: st.end, quote: st.quote, prefix: st.prefix || "", suffix: st.suffix || "",
      verdict: st.verdict, comment: st.comment, sub_question: st.sub_question || "", checkpoint: st.checkpoint
    }))
  };
}

export function localKey() { return "realmath-label-draft-" + page.config.responseId; }

export const byId = (id) => document.getElementById(id);

export function el(tag, attrs, text) {
  const node = document.createElement(tag);
  Object.keys(attrs || {}).forEach((k) => { node.setAttribute(k, attrs[k]); });
  if (text !== undefined) node.textContent = text;
  return node;
}
