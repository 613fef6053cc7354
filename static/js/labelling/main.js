/* RealMath Workbench: the labelling screen (templates/annotation/label.html), as ES modules.
 *
 * state.js holds the label being edited; render.js draws the score form, the transcript with
 * its step spans and the step list; rubric.js is the rubric rule (the server's, for instant
 * feedback); passages.js selects passages for step labels and flags; saving.js autosaves a
 * server-side draft and saves/submits through the API with the version the edit started from
 * (a stale save comes back as 409 with both versions, shown side by side); keys.js is the
 * keyboard. Offsets of step spans count Unicode code points of the raw transcript, as the server
 * does. All student text is put in the page with textContent; KaTeX renders math with trust off.
 */
import { onKey } from "./keys.js";
import { addStep, closeFlagForm, closeStepForm, openFlagForm, removeStep, selectedSpan, sendFlag } from "./passages.js";
import { announceSpan, buildForm, highlight, renderAll, renderForm } from "./render.js";
import { changed, mark, restoreDraft, save, saveDraft, status } from "./saving.js";
import { byId, init, labelFrom, page, setPoints } from "./state.js";
import { T } from "./text.js";

function wire() {
  const config = page.config, groupsEl = byId("groups"), transcriptEl = byId("transcript");
  document.addEventListener("keydown", onKey);
  groupsEl.addEventListener("input", (event) => {
    if (!event.target.matches("input.points")) return;
    setPoints(Number(event.target.getAttribute("data-index")), event.target.value.trim(), false);
    changed();
  });
  groupsEl.addEventListener("focusin", (event) => {
    const box = event.target.closest(".group");
    if (box) { page.focus.group = Number(box.getAttribute("data-index")); renderForm(); }
  });
  groupsEl.addEventListener("click", (event) => {
    const li = event.target.closest(".cp");
    if (!li) return;
    const index = Number(li.getAttribute("data-index")), cpIndex = Number(li.getAttribute("data-cp-index"));
    page.focus.group = index; page.focus.checkpoint[index] = cpIndex;
    const button = event.target.closest("button[data-mark]");
    if (button && config.editable) {
      const m = button.getAttribute("data-mark");
      const current = page.label.checkpoint_marks[li.getAttribute("data-cp")];
      mark(index, cpIndex, current === m ? null : m);
    } else renderForm();
  });
  byId("override_reason").addEventListener("input", (e) => { page.label.override_reason = e.target.value; changed(); });
  byId("comment").addEventListener("input", (e) => { page.label.comment = e.target.value; changed(); });
  if (!config.editable) { byId("override_reason").disabled = true; byId("comment").disabled = true; }
  byId("save-button").addEventListener("click", () => { save(false); });
  byId("submit-button").addEventListener("click", () => { save(true); });
  document.addEventListener("selectionchange", () => {
    const span = selectedSpan();
    if (span) announceSpan(span);
  });
  if (byId("flag-form")) {
    byId("flag-send").addEventListener("click", sendFlag);
    byId("flag-cancel").addEventListener("click", closeFlagForm);
    // mousedown keeps the selection in the transcript (a click would clear it first)
    byId("flag-open").addEventListener("mousedown", (e) => { e.preventDefault(); openFlagForm(); });
  }
  byId("step-add").addEventListener("click", addStep);
  byId("step-cancel").addEventListener("click", closeStepForm);
  const list = byId("step-list");
  list.addEventListener("click", (event) => {
    const b = event.target.closest("button[data-remove]");
    if (b) removeStep(Number(b.getAttribute("data-remove")));
  });
  list.addEventListener("mouseover", (event) => { highlight(event.target.closest("li")); });
  list.addEventListener("focusin", (event) => { highlight(event.target.closest("li")); });
  transcriptEl.addEventListener("mouseup", () => {
    if (selectedSpan() && config.editable) status(T.passageSelected);
  });
  window.addEventListener("pagehide", () => { if (page.draftPending) saveDraft(true); });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && page.draftPending) saveDraft(true);
  });
}

init(JSON.parse(byId("label-config").textContent));
buildForm();
page.label = labelFrom(page.config.label);
restoreDraft();
wire();
renderAll();
if (page.draftPending) saveDraft();
