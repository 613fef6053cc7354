/* Drawing the labelling screen from the state: the score form, the transcript with its step
 * spans, the list of step labels. All student text goes in through textContent. */
import { check, showCents } from "./rubric.js";
import { page, pointsOf, byId, el } from "./state.js";
import { MARK_NAMES, T } from "./text.js";
import { placed, snap, stepQuote } from "./transcript_text.js";

const MESSAGES = { notNumber: T.notNumber, atMost: T.atMost, totalTooHigh: T.totalTooHigh };

export function checkLabel() {
  return check(page.groups, pointsOf, page.label.checkpoint_marks, page.config.fullScore, MESSAGES);
}

export function buildForm() {
  const groupsEl = byId("groups");
  groupsEl.textContent = "";
  page.groups.forEach((g, index) => {
    const box = el("div", { "class": "group", "data-index": index, id: "group-" + index });
    const head = el("div", { "class": "group-head" });
    head.appendChild(el("span", { "class": "glabel" }, g.label === "" ? T.total : g.label));
    const input = el("input", { "class": "points", type: "text", inputmode: "decimal", "data-index": index,
                                "aria-label": T.pointsFor(g.label) });
    if (!page.config.editable) input.disabled = true;
    head.appendChild(input);
    head.appendChild(el("span", { "class": "max" }, g.max !== null ? "/ " + Number(g.max) : ""));
    head.appendChild(el("span", { "class": "proposal" }));
    box.appendChild(head);
    const list = el("ol", { "class": "cps" });
    g.checkpoints.forEach((c, cpIndex) => {
      const li = el("li", { "class": "cp", "data-cp": c.id, "data-index": index, "data-cp-index": cpIndex, title: c.text });
      li.appendChild(el("span", { "class": "cp-name" }, T.step(cpIndex + 1, Number(c.worth), Number(c.cumulative), c.out_of === null ? null : Number(c.out_of))));
      ["reached", "partly", "not_reached"].forEach((m) => {
        const b = el("button", { type: "button", "data-mark": m, title: MARK_NAMES[m], tabindex: "-1" },
                     m === "reached" ? "✓" : m === "partly" ? "½" : "✗");
        if (!page.config.editable) b.disabled = true;
        li.appendChild(b);
      });
      list.appendChild(li);
    });
    box.appendChild(list);
    box.appendChild(el("p", { "class": "row-error", hidden: "" }));
    box.appendChild(el("p", { "class": "override", hidden: "" }));
    groupsEl.appendChild(box);
  });
}

export function focusedCheckpoint() {
  const g = page.groups[page.focus.group];
  return g && g.checkpoints.length ? g.checkpoints[page.focus.checkpoint[page.focus.group]] : null;
}

export function renderForm() {
  const result = checkLabel();
  const state = page.label, focus = page.focus;
  page.groups.forEach((g, index) => {
    const box = byId("group-" + index);
    const row = result.rows[index];
    const input = box.querySelector("input.points");
    const value = pointsOf(index);
    if (document.activeElement !== input) input.value = value === null || value === undefined ? "" : value;
    box.classList.toggle("focused", focus.group === index);
    const prop = row.prop;
    box.querySelector(".proposal").textContent = prop ? rangeInWords(prop) : "";
    const err = box.querySelector(".row-error");
    err.textContent = row.error; err.hidden = !row.error;
    const ov = box.querySelector(".override");
    ov.textContent = row.override ? T.outside(showCents(row.cents), rangeInWords(prop)) : "";
    ov.hidden = !row.override;
    box.querySelectorAll(".cp").forEach((li) => {
      const m = state.checkpoint_marks[li.getAttribute("data-cp")] || "";
      li.className = "cp" + (m ? " m-" + m : "") +
        (focus.group === index && focus.checkpoint[index] === Number(li.getAttribute("data-cp-index")) ? " focused" : "");
    });
  });
  document.querySelectorAll(".reference .checkpoint").forEach((span) => {
    const m = state.checkpoint_marks[span.getAttribute("data-checkpoint")] || "";
    span.classList.remove("m-reached", "m-partly", "m-not_reached", "active");
    if (m) span.classList.add("m-" + m);
  });
  const cp = focusedCheckpoint();
  if (cp) {
    const ref = document.querySelector('.reference .checkpoint[data-checkpoint="' + cp.id + '"]');
    if (ref) ref.classList.add("active");
  }
  byId("total").textContent = showCents(result.total);
  byId("total").classList.toggle("error", !!result.totalError);
  const reason = byId("override_reason");
  reason.classList.toggle("needed", result.overrides && !state.override_reason.trim());
  const reasonNote = byId("override-needed");
  if (reasonNote) reasonNote.hidden = !result.overrides;
  if (document.activeElement !== reason) reason.value = state.override_reason;
  if (document.activeElement !== byId("comment")) byId("comment").value = state.comment;
  byId("form-errors").textContent = result.totalError;
}

function rangeInWords(prop) {
  if (prop.low === prop.high) return T.rangeExactly(showCents(prop.low));
  return prop.open ? T.rangeOpen(showCents(prop.low), showCents(prop.high)) : T.rangeClosed(showCents(prop.low), showCents(prop.high));
}

export function verdictName(value) {
  const found = page.config.verdicts.filter((v) => v[0] === value)[0];
  return found ? found[1] : value;
}

export function renderTranscript() {
  const chars = page.chars, steps = page.label.step_labels, transcriptEl = byId("transcript");
  const cuts = { 0: true };
  cuts[chars.length] = true;
  page.math.forEach((r) => { cuts[r[0]] = true; cuts[r[1]] = true; });
  steps.forEach((s) => {
    if (placed(chars, s)) { cuts[snap(page.math, s.start, "start")] = true; cuts[snap(page.math, s.end, "end")] = true; }
  });
  const points = Object.keys(cuts).map(Number).sort((a, b) => a - b);
  transcriptEl.textContent = "";
  for (let p = 0; p < points.length - 1; p++) {
    const start = points[p], end = points[p + 1];
    if (end <= start) continue;
    const isMath = page.math.some((r) => start >= r[0] && end <= r[1]);
    const covering = [];
    steps.forEach((s, index) => { if (placed(chars, s) && s.start < end && s.end > start) covering.push(index); });
    const span = el("span", { "class": "seg" + (isMath ? " math math-seg" : ""), "data-start": start, "data-end": end },
                    chars.slice(start, end).join(""));
    if (covering.length) {
      const last = steps[covering[covering.length - 1]];
      span.classList.add("step", "step-" + last.verdict);
      span.setAttribute("data-steps", covering.join(" "));
      span.title = covering.map((i) => verdictName(steps[i].verdict)).join(", ");
    }
    transcriptEl.appendChild(span);
  }
  page.RM.renderMath(transcriptEl);
}

export function renderSteps() {
  const list = byId("step-list"), steps = page.label.step_labels;
  list.textContent = "";
  steps.forEach((s, index) => {
    const li = el("li", { tabindex: "0", "data-step": index });
    li.appendChild(el("span", { "class": "verdict verdict-" + s.verdict }, verdictName(s.verdict)));
    if (!placed(page.chars, s)) {
      li.classList.add("needs-review");
      li.appendChild(el("span", { "class": "badge warn", title: T.needsReviewTitle }, T.needsReview));
      const old = s.quote || "";
      li.appendChild(el("span", { "class": "q math" }, old.length > 160 ? old.slice(0, 160) + "…" : old));
    } else {
      li.appendChild(el("span", { "class": "q math" }, stepQuote(page.chars, page.math, s)));
    }
    const del = el("button", { type: "button", "data-remove": index, title: T.removeStep }, "×");
    if (!page.config.editable) del.disabled = true;
    li.appendChild(del);
    const extra = [s.sub_question, s.comment].filter(Boolean).join(" · ");
    if (extra) li.appendChild(el("span", { "class": "c" }, extra));
    list.appendChild(li);
  });
  page.RM.renderMath(list);
  byId("no-steps").hidden = steps.length > 0;
  byId("step-count").textContent = steps.length ? String(steps.length) : "";
}

export function renderAll() { renderForm(); renderTranscript(); renderSteps(); }

// Tell the scan viewer (static/js/scan_pages.js) which passage to outline on the page image.
export function announceSpan(span) {
  document.dispatchEvent(new CustomEvent("rm:span", { detail: span }));
}

export function highlight(li) {
  const transcriptEl = byId("transcript");
  transcriptEl.querySelectorAll(".seg.hot").forEach((s) => { s.classList.remove("hot"); });
  if (!li) return;
  const index = li.getAttribute("data-step");
  const step = page.label.step_labels[Number(index)];
  if (step && placed(page.chars, step)) announceSpan({ start: step.start, end: step.end });
  transcriptEl.querySelectorAll(".seg[data-steps]").forEach((s) => {
    if (s.getAttribute("data-steps").split(" ").indexOf(index) >= 0) s.classList.add("hot");
  });
}
