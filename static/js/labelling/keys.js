/* The labelling screen's keyboard (the page's `?` list shows it; docs/labelling.md). Single keys
 * work outside text fields; the scan viewer (static/js/scan_viewer.js) takes its own keys. */
import { openFlagForm, closeFlagForm, sendFlag, openStepForm, closeStepForm, addStep, removeStep } from "./passages.js";
import { focusedCheckpoint, renderForm } from "./render.js";
import { cents, proposal } from "./rubric.js";
import { changed, leave, mark, save } from "./saving.js";
import { page, pointsOf, setPoints, byId } from "./state.js";

const DIGIT_WINDOW_MS = 900;

function moveGroup(delta) {
  page.focus.group = Math.max(0, Math.min(page.groups.length - 1, page.focus.group + delta));
  page.digitBuffer.text = "";
  renderForm();
  const box = byId("group-" + page.focus.group);
  if (box) box.scrollIntoView({ block: "nearest" });
}

function moveCheckpoint(delta) {
  const focus = page.focus, n = page.groups[focus.group].checkpoints.length;
  if (!n) return;
  focus.checkpoint[focus.group] = Math.max(0, Math.min(n - 1, focus.checkpoint[focus.group] + delta));
  renderForm();
  const cp = focusedCheckpoint();
  const ref = cp && document.querySelector('.reference .checkpoint[data-checkpoint="' + cp.id + '"]');
  if (ref) ref.scrollIntoView({ block: "nearest" });
}

// Digits typed in quick succession make one number (1 0 -> 10, 2 . 5 -> 2.5) up to the maximum.
function typeDigit(key) {
  if (!page.config.editable) return;
  const index = page.focus.group, now = Date.now(), buffer = page.digitBuffer;
  if (now - buffer.time > DIGIT_WINDOW_MS || buffer.group !== index) buffer.text = "";
  let text = buffer.text;
  if (key === ".") text = (text || String(pointsOf(index) || "0")).replace(/\..*$/, "") + ".";
  else {
    text = text + key;
    const g = page.groups[index];
    const limit = g.max !== null ? cents(g.max) : cents(page.config.fullScore);
    if (!/^\d+(\.\d{0,2})?$/.test(text) || cents(text.replace(/\.$/, "")) > limit) text = key;
  }
  page.digitBuffer = { text, time: now, group: index };
  setPoints(index, text.replace(/\.$/, ""), false);
  changed();
}

export function onKey(event) {
  const config = page.config, target = event.target;
  const typing = page.RM.isTyping(target);
  const flagForm = byId("flag-form");
  if (flagForm && flagForm.contains(target)) {
    if (event.key === "Escape") { closeFlagForm(); target.blur(); }
    else if (event.key === "Enter") { event.preventDefault(); sendFlag(); }
    return;
  }
  const stepForm = byId("step-form");
  const inStepForm = stepForm.contains(target);
  const mod = event.ctrlKey || event.metaKey;
  if (event.key === "Escape") {
    if (!stepForm.hidden) closeStepForm();
    if (typing || inStepForm) target.blur();
    return;
  }
  if (mod && event.key === "Enter") { event.preventDefault(); save(true); return; }
  if (mod && (event.key === "s" || event.key === "S")) { event.preventDefault(); save(false); return; }
  if (inStepForm) {
    if (event.key === "Enter") { event.preventDefault(); addStep(); return; }
    if (!typing && /^[1-9]$/.test(event.key)) {
      const radio = document.querySelectorAll('input[name="step-verdict"]')[Number(event.key) - 1];
      if (radio) { radio.checked = true; radio.focus(); event.preventDefault(); }
    }
    return;
  }
  if (typing || mod || event.altKey) return;
  if (target.closest && target.closest("#step-list") && (event.key === "Delete" || event.key === "Backspace")) {
    const li = target.closest("li");
    if (li) { event.preventDefault(); removeStep(Number(li.getAttribute("data-step"))); }
    return;
  }
  if (target.matches && target.matches("button, a") && event.key === "Enter") return;
  const key = event.key, focus = page.focus;
  let handled = true;
  if (/^[0-9.]$/.test(key)) typeDigit(key);
  else if (key === "j" || key === "ArrowDown") moveGroup(1);
  else if (key === "k" || key === "ArrowUp") moveGroup(-1);
  else if (key === "l" || key === "ArrowRight") moveCheckpoint(1);
  else if (key === "h" || key === "ArrowLeft") moveCheckpoint(-1);
  else if (key === "Backspace") { if (config.editable) { setPoints(focus.group, "", false); changed(); } }
  else if (key === "r" || key === "p" || key === "x" || key === "u") {
    if (config.editable) {
      mark(focus.group, focus.checkpoint[focus.group], { r: "reached", p: "partly", x: "not_reached", u: null }[key]);
    }
  }
  else if (key === "a") {
    const prop = proposal(page.groups[focus.group].checkpoints, page.label.checkpoint_marks);
    if (prop && config.editable) { setPoints(focus.group, String(prop.low / 100), true); changed(); }
  }
  else if (key === "e") openStepForm();
  else if (key === "t" && config.urls.flag) openFlagForm();
  else if (key === "c") byId("comment").focus();
  else if (key === "o") byId("override_reason").focus();
  else if (key === "s") save(false);
  else if (key === "]") {
    leave(() => { if (config.urls.next) window.location.assign(config.urls.next); else byId("next-form").submit(); });
  }
  else if (key === "[") { if (config.urls.previous) leave(() => { window.location.assign(config.urls.previous); }); }
  else if (key === "?") { const s = byId("shortcuts"); s.hidden = !s.hidden; }
  else handled = false;
  if (handled) event.preventDefault();
}
