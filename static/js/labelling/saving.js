/* Drafts and saves: a draft goes to the server (and this browser's storage) shortly after each
 * change; Save and Submit send the label with the version the edit started from, and a stale
 * save (409) shows both versions side by side. */
import { checkLabel, renderAll, renderForm } from "./render.js";
import { proposal, markCheckpoint } from "./rubric.js";
import { page, labelFrom, emptyLabel, payload, localKey, pointsOf, setPoints, byId, el } from "./state.js";
import { T } from "./text.js";

const DRAFT_DELAY_MS = 800;

export function status(text, kind) {
  const s = byId("save-status");
  s.textContent = text;
  s.className = kind || "";
}

export function changed() {
  renderForm();
  if (!page.config.editable) return;
  page.draftPending = true;
  try {
    localStorage.setItem(localKey(), JSON.stringify({ at: Date.now(), base_version: page.version, payload: payload() }));
  } catch (e) { /* private mode: the server draft is enough */ }
  clearTimeout(page.draftTimer);
  page.draftTimer = setTimeout(saveDraft, DRAFT_DELAY_MS);
  status(T.editing);
}

// Mark checkpoint cpIndex of group `index`; the points follow the rubric unless typed by hand.
export function mark(index, cpIndex, value) {
  const cps = page.groups[index].checkpoints;
  if (!cps.length) return;
  page.label.checkpoint_marks = markCheckpoint(cps, page.label.checkpoint_marks, cpIndex, value);
  const prop = proposal(cps, page.label.checkpoint_marks);
  const current = pointsOf(index);
  if (prop && (current === null || current === undefined || current === "" || page.autoFilled[index])) {
    setPoints(index, String(prop.low / 100), true);
  }
  changed();
}

export function saveDraft(keepalive) {
  clearTimeout(page.draftTimer);
  if (!page.draftPending || !page.config.editable) return Promise.resolve();
  page.draftPending = false;
  const seconds = page.active.take();
  const body = { base_version: page.version, payload: payload(), annotation: page.config.label ? page.config.label.id : null,
                 active_seconds_delta: seconds };
  return page.RM.sendJson(page.config.urls.draft, "PUT", body, { keepalive }).then((res) => {
    if (res.ok) {
      status(T.draftKept(new Date().toLocaleTimeString(), page.version), "ok");
    } else {
      page.active.giveBack(seconds);
      page.draftPending = true;
      status(T.draftNotKept(res.status), "bad");
    }
  }).catch(() => {
    page.active.giveBack(seconds);
    page.draftPending = true;
    status(T.draftOffline, "bad");
  });
}

export function save(submit) {
  const config = page.config;
  if (!config.editable || page.busy) return;
  const result = checkLabel();
  if (submit && result.overrides && !page.label.override_reason.trim()) {
    byId("form-errors").textContent = T.needReason;
    byId("override_reason").focus();
    return;
  }
  page.busy = true;
  clearTimeout(page.draftTimer);
  const seconds = page.active.take();
  const body = Object.assign({ base_version: page.version, submit: !!submit, active_seconds_delta: seconds }, payload());
  status(submit ? T.submitting : T.saving);
  page.RM.sendJson(config.urls.save, "PUT", body).then((answer) => {
    page.busy = false;
    if (answer.status === 200 || answer.status === 201) {
      page.version = answer.data.version;
      config.label = answer.data;
      page.draftPending = false;
      try { localStorage.removeItem(localKey()); } catch (e) { /* ignore */ }
      byId("conflict").hidden = true;
      byId("draft-note").hidden = true;
      byId("form-errors").textContent = "";
      status(T.saved(submit, page.version, new Date().toLocaleTimeString()), "ok");
      if (submit) window.location.assign(config.urls.page + (config.urls.page.indexOf("?") >= 0 ? "&" : "?") + "submitted=1");
      return;
    }
    page.active.giveBack(seconds);
    if (answer.status === 409) {
      showConflict(answer.data);
      status(T.staleNotSaved, "bad");
    } else if (answer.status === 400) {
      showErrors(answer.data);
      status(T.fixMarked, "bad");
    } else {
      byId("form-errors").textContent = (answer.data && answer.data.detail) || T.serverAnswered(answer.status);
      status(T.notSaved, "bad");
    }
  }).catch(() => {
    page.busy = false;
    page.active.giveBack(seconds);
    status(T.noConnection, "bad");
  });
}

function showErrors(data) {
  const errors = (data && data.errors) || {};
  const lines = [];
  Object.keys(errors).forEach((field) => { (errors[field] || []).forEach((m) => { lines.push(m); }); });
  if (!lines.length && data && data.detail) lines.push(data.detail);
  byId("form-errors").textContent = lines.join(" ");
}

function summary(label) {
  if (!label) return {};
  const groups = page.groups, rows = {};
  groups.forEach((g) => {
    const v = g.label === "" ? label.total : (label.sub_scores || {})[g.label];
    rows[g.label === "" ? T.total : g.label] = v === undefined || v === null || v === "" ? "—" : String(Number(v));
  });
  if (groups[0].label !== "") {
    let t = 0, any = false;
    groups.forEach((g) => {
      const v = (label.sub_scores || {})[g.label];
      if (v !== undefined && v !== null && v !== "") { t += Number(v); any = true; }
    });
    rows[T.total] = any ? String(Math.round(t * 100) / 100) : "—";
  }
  rows[T.checkpointsMarked] = String(Object.keys(label.checkpoint_marks || {}).length);
  rows[T.stepLabels] = String((label.step_labels || []).length);
  rows[T.comment] = label.comment || "";
  rows[T.overrideReason] = label.override_reason || "";
  return rows;
}

function showConflict(data) {
  const box = byId("conflict");
  box.textContent = "";
  box.appendChild(el("h2", {}, T.conflictTitle));
  box.appendChild(el("p", {}, data.detail || ""));
  const theirs = data.theirs;
  const mine = summary(data.yours), other = summary(theirs);
  const table = el("table", { "class": "grid", id: "conflict-table" });
  const head = el("tr");
  head.appendChild(el("th", {}, ""));
  head.appendChild(el("th", {}, T.yours(data.yours.base_version)));
  head.appendChild(el("th", {}, theirs ? T.theirs(theirs.version, theirs.updated_by) : T.savedColumn));
  const thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
  const body = el("tbody");
  Object.keys(mine).forEach((key) => {
    const tr = el("tr");
    tr.appendChild(el("th", {}, key));
    const a = el("td", {}, mine[key]), b = el("td", {}, other[key] === undefined ? "" : other[key]);
    if (mine[key] !== other[key]) { a.className = "diff"; b.className = "diff"; }
    tr.appendChild(a); tr.appendChild(b); body.appendChild(tr);
  });
  table.appendChild(body);
  const wrap = el("div", { "class": "table-wrap" });
  wrap.appendChild(table);
  box.appendChild(wrap);
  const actions = el("p", { "class": "form-actions" });
  const keep = el("button", { type: "button", "class": "primary", id: "keep-mine" }, T.keepMine(theirs ? theirs.version : "?"));
  const take = el("button", { type: "button", id: "take-theirs" }, T.takeTheirs);
  keep.addEventListener("click", () => {
    if (theirs) page.version = theirs.version;
    box.hidden = true;
    save(false);
  });
  take.addEventListener("click", () => {
    if (theirs) { page.version = theirs.version; page.config.label = theirs; page.label = labelFrom(theirs); }
    box.hidden = true;
    page.draftPending = true;
    renderAll(); saveDraft();
    status(T.loaded(page.version), "ok");
  });
  actions.appendChild(take); actions.appendChild(keep);
  box.appendChild(actions);
  box.hidden = false;
  box.scrollIntoView({ block: "nearest" });
}

// Before leaving the page by a key: keep the draft first.
export function leave(go) {
  if (page.draftPending) saveDraft().then(go, go); else go();
}

// JSON with sorted keys (numbers as text): two payloads with the same content compare equal.
function canonical(value) {
  if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
  if (value && typeof value === "object") {
    return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
  }
  if (typeof value === "number") return JSON.stringify(String(value));
  return JSON.stringify(value === undefined ? null : value);
}

// A draft newer than the saved label (on the server, or in this browser when the server did
// not get it) is put back on load, with a note saying from when and where.
export function restoreDraft() {
  const config = page.config, note = byId("draft-note"), server = config.draft;
  let local = null;
  try { local = JSON.parse(localStorage.getItem(localKey()) || "null"); } catch (e) { local = null; }
  const serverTime = server ? Date.parse(server.updated) : 0;
  let chosen = null;
  if (local && local.at > serverTime + 2000 && (!config.label || local.at > Date.parse(config.label.updated))) {
    chosen = { payload: local.payload, base_version: local.base_version, when: new Date(local.at), where: T.thisBrowser };
  } else if (server) {
    chosen = { payload: server.payload, base_version: server.base_version, when: new Date(serverTime), where: T.theServer };
  }
  if (!chosen || !config.editable) return;
  const saved = canonical(payload());  // the label as saved (or the empty form)
  const before = page.label;
  page.label = Object.assign(emptyLabel(), chosen.payload || {});
  page.label.step_labels = page.label.step_labels || [];
  if (canonical(payload()) === saved) {
    // The draft holds nothing the label does not (one's own autosave of what was then saved,
    // even one that reached the server after the save): nothing is restored, nothing is said.
    page.label = before;
    return;
  }
  page.version = chosen.base_version;
  page.draftPending = chosen.where === T.thisBrowser;
  let text = T.restored(chosen.when.toLocaleString(), chosen.where);
  if (config.label && chosen.base_version !== config.label.version) {
    text += T.restoredOlder(chosen.base_version, config.label.version);
  }
  note.textContent = text;
  note.hidden = false;
}
