/* RealMath Workbench: the labelling screen.
 *
 * Keeps the label being edited in `state`, renders the score form and the transcript with its
 * step spans, autosaves a server-side draft, and saves/submits through the API with the version
 * the edit started from (a stale save comes back as 409 with both versions, shown side by side).
 * Offsets of step spans count Unicode code points of the raw transcript, as the server does.
 * All student text is put in the page with textContent; KaTeX renders math with trust off.
 */
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("label-config").textContent);
  var RM = window.RealMath;
  var MARK_NAMES = { reached: "reached", partly: "partly reached", not_reached: "not reached" };
  var DIGIT_WINDOW_MS = 900;
  var DRAFT_DELAY_MS = 800;

  var chars = Array.from(config.transcript);
  var groups = config.groups;
  var version = config.label ? config.label.version : 0;
  var state = emptyState();
  var focus = { group: 0, checkpoint: groups.map(function () { return 0; }) };
  var autoFilled = {};
  var digitBuffer = { text: "", time: 0, group: -1 };
  var draftTimer = null;
  var draftPending = false;
  var pendingStep = null;
  var busy = false;
  var active = activeTimer((config.activeIdleSeconds || 60) * 1000);

  var $ = function (id) { return document.getElementById(id); };
  var groupsEl = $("groups");
  var transcriptEl = $("transcript");

  // Active time: it counts while the page is visible, has the focus and had input (a key, a
  // click, the wheel, a touch, a scroll) in the last `idleMs`; whole seconds go out with each
  // draft and save as an increment, and come back to the count if the request fails.
  function activeTimer(idleMs) {
    var lastInput = Date.now(), lastTick = Date.now(), ms = 0;
    function input() { lastInput = Date.now(); }
    ["keydown", "mousedown", "wheel", "touchstart", "scroll", "input"].forEach(function (name) {
      window.addEventListener(name, input, { capture: true, passive: true });
    });
    window.setInterval(function () {
      var now = Date.now(), step = Math.min(now - lastTick, 2000);  // a sleeping laptop adds nothing
      lastTick = now;
      if (document.visibilityState === "visible" && document.hasFocus() && now - lastInput < idleMs) ms += step;
    }, 1000);
    return {
      take: function () { var s = Math.floor(ms / 1000); ms -= s * 1000; return s; },
      giveBack: function (s) { ms += s * 1000; }
    };
  }

  function emptyState() {
    return { sub_scores: {}, total: null, checkpoint_marks: {}, override_reason: "", comment: "", step_labels: [] };
  }

  function stateFrom(label) {
    var s = emptyState();
    if (!label) return s;
    Object.keys(label.sub_scores || {}).forEach(function (k) { s.sub_scores[k] = String(label.sub_scores[k]); });
    s.total = label.total === null || label.total === undefined ? null : String(Number(label.total));
    s.checkpoint_marks = Object.assign({}, label.checkpoint_marks || {});
    s.override_reason = label.override_reason || "";
    s.comment = label.comment || "";
    s.step_labels = (label.step_labels || []).map(function (st) {
      return { start: st.start, end: st.end, quote: st.quote, prefix: st.prefix || "", suffix: st.suffix || "",
               needs_review: !!st.needs_review, verdict: st.verdict, comment: st.comment || "",
               sub_question: st.sub_question || "", checkpoint: st.checkpoint || null };
    });
    return s;
  }

  // --- numbers (in hundredths, to avoid binary fractions) -----------------------------------

  function cents(value) {
    if (value === null || value === undefined || String(value).trim() === "") return null;
    var text = String(value).trim();
    if (!/^\d+(\.\d{0,2})?$/.test(text)) return NaN;
    return Math.round(parseFloat(text) * 100);
  }
  function show(c) { return c === null ? "—" : String(c / 100); }
  // The points the rubric's marks allow, in words (a "partly" mark leaves its own points out).
  function rangeInWords(prop) {
    if (prop.low === prop.high) return "the marks give exactly " + show(prop.low) + " points";
    return prop.open
      ? "the marks give at least " + show(prop.low) + " and less than " + show(prop.high) + " points"
      : "the marks give " + show(prop.low) + " to " + show(prop.high) + " points";
  }

  function pointsOf(index) {
    var g = groups[index];
    return g.label === "" ? state.total : state.sub_scores[g.label];
  }
  function setPoints(index, value, auto) {
    var g = groups[index];
    if (g.label === "") state.total = value === "" ? null : value;
    else if (value === "" || value === null) delete state.sub_scores[g.label];
    else state.sub_scores[g.label] = value;
    autoFilled[index] = !!auto;
  }

  // --- the cumulative rubric: what the marks propose (same rule as annotation/labelling/rules.py) ---

  function proposal(index) {
    var cps = groups[index].checkpoints;
    var marks = cps.map(function (c) { return state.checkpoint_marks[String(c.id)] || null; });
    if (!marks.some(Boolean)) return null;
    var low = 0, i;
    for (i = 0; i < cps.length && marks[i] === "reached"; i++) low = cents(cps[i].points);
    var high = low, open = false;
    for (i = 0; i < cps.length; i++) {
      var p = cents(cps[i].points);
      if (marks[i] === "reached" && p >= high) { high = p; open = false; }
      else if (marks[i] === "partly" && p > high) { high = p; open = true; }
    }
    return { low: low, high: Math.max(high, low), open: open && high > low };
  }
  function admits(prop, c) {
    if (c < prop.low) return false;
    return prop.open ? (c < prop.high || c === prop.low) : c <= prop.high;
  }

  function mark(index, cpIndex, value) {
    var cps = groups[index].checkpoints;
    if (!cps.length) return;
    var key = String(cps[cpIndex].id);
    if (value === "reached" || value === "partly") {
      // Marking the highest step reached: everything before it is reached, later "reached" marks go.
      for (var i = 0; i < cpIndex; i++) state.checkpoint_marks[String(cps[i].id)] = "reached";
      for (var j = cpIndex + 1; j < cps.length; j++) {
        if (state.checkpoint_marks[String(cps[j].id)] === "reached") delete state.checkpoint_marks[String(cps[j].id)];
      }
    }
    if (value) state.checkpoint_marks[key] = value; else delete state.checkpoint_marks[key];
    var prop = proposal(index);
    var current = pointsOf(index);
    if (prop && (current === null || current === undefined || current === "" || autoFilled[index])) {
      setPoints(index, String(prop.low / 100), true);
    }
    changed();
  }

  // --- validation mirrored from the server, for instant feedback ----------------------------

  function check() {
    var rows = groups.map(function (g, index) {
      var raw = pointsOf(index);
      var c = cents(raw);
      var row = { cents: c, error: "", override: false, prop: proposal(index) };
      if (Number.isNaN(c)) row.error = "Not a number with at most 2 decimals.";
      else if (c !== null && g.max !== null && c > cents(g.max)) row.error = "At most " + Number(g.max) + " points.";
      else if (c !== null && row.prop && !admits(row.prop, c)) row.override = true;
      return row;
    });
    var total = null;
    rows.forEach(function (r) { if (r.cents !== null && !Number.isNaN(r.cents)) total = (total || 0) + r.cents; });
    var totalError = total !== null && total > cents(config.fullScore) ? "The total exceeds the full score." : "";
    return { rows: rows, total: total, totalError: totalError, overrides: rows.some(function (r) { return r.override; }) };
  }

  // --- rendering ----------------------------------------------------------------------------

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function buildForm() {
    groupsEl.textContent = "";
    groups.forEach(function (g, index) {
      var box = el("div", { "class": "group", "data-index": index, id: "group-" + index });
      var head = el("div", { "class": "group-head" });
      head.appendChild(el("span", { "class": "glabel" }, g.label === "" ? "Total" : g.label));
      var input = el("input", { "class": "points", type: "text", inputmode: "decimal", "data-index": index,
                                "aria-label": "Points for " + (g.label || "the answer") });
      if (!config.editable) input.disabled = true;
      head.appendChild(input);
      head.appendChild(el("span", { "class": "max" }, g.max !== null ? "/ " + Number(g.max) : ""));
      head.appendChild(el("span", { "class": "proposal" }));
      box.appendChild(head);
      var list = el("ol", { "class": "cps" });
      g.checkpoints.forEach(function (c, cpIndex) {
        var li = el("li", { "class": "cp", "data-cp": c.id, "data-index": index, "data-cp-index": cpIndex,
                            title: c.text });
        li.appendChild(el("span", { "class": "cp-name" },
          "Step " + (cpIndex + 1) + ": " + Number(c.points) + " pts (cumulative " + Number(c.cumulative) + ")"));
        ["reached", "partly", "not_reached"].forEach(function (m) {
          var b = el("button", { type: "button", "data-mark": m, title: MARK_NAMES[m], tabindex: "-1" },
                     m === "reached" ? "✓" : m === "partly" ? "½" : "✗");
          if (!config.editable) b.disabled = true;
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

  function renderForm() {
    var result = check();
    groups.forEach(function (g, index) {
      var box = $("group-" + index);
      var row = result.rows[index];
      var input = box.querySelector("input.points");
      var value = pointsOf(index);
      if (document.activeElement !== input) input.value = value === null || value === undefined ? "" : value;
      box.classList.toggle("focused", focus.group === index);
      var prop = row.prop;
      box.querySelector(".proposal").textContent = prop ? rangeInWords(prop) : "";
      var err = box.querySelector(".row-error");
      err.textContent = row.error; err.hidden = !row.error;
      var ov = box.querySelector(".override");
      ov.textContent = row.override
        ? show(row.cents) + " points is outside what the marks give (" + rangeInWords(prop) +
          "): say why in “Reason for overriding the rubric” below."
        : "";
      ov.hidden = !row.override;
      box.querySelectorAll(".cp").forEach(function (li) {
        var m = state.checkpoint_marks[li.getAttribute("data-cp")] || "";
        li.className = "cp" + (m ? " m-" + m : "") +
          (focus.group === index && focus.checkpoint[index] === Number(li.getAttribute("data-cp-index")) ? " focused" : "");
      });
    });
    document.querySelectorAll(".reference .checkpoint").forEach(function (span) {
      var m = state.checkpoint_marks[span.getAttribute("data-checkpoint")] || "";
      span.classList.remove("m-reached", "m-partly", "m-not_reached", "active");
      if (m) span.classList.add("m-" + m);
    });
    var cp = focusedCheckpoint();
    if (cp) {
      var ref = document.querySelector('.reference .checkpoint[data-checkpoint="' + cp.id + '"]');
      if (ref) ref.classList.add("active");
    }
    $("total").textContent = show(result.total);
    $("total").classList.toggle("error", !!result.totalError);
    var reason = $("override_reason");
    reason.classList.toggle("needed", result.overrides && !state.override_reason.trim());
    var reasonNote = $("override-needed");
    if (reasonNote) reasonNote.hidden = !result.overrides;
    if (document.activeElement !== reason) reason.value = state.override_reason;
    if (document.activeElement !== $("comment")) $("comment").value = state.comment;
    $("form-errors").textContent = result.totalError;
  }

  function focusedCheckpoint() {
    var g = groups[focus.group];
    return g && g.checkpoints.length ? g.checkpoints[focus.checkpoint[focus.group]] : null;
  }

  // Math in the transcript: $$..$$, $..$, \[..\], \(..\) as KaTeX auto-render finds them.
  function mathRanges() {
    var ranges = [], i = 0, n = chars.length;
    function find(from, closing) {
      for (var j = from; j <= n - closing.length; j++) {
        if (chars[j] === "\\" && closing !== "\\)" && closing !== "\\]") { j++; continue; }
        if (chars.slice(j, j + closing.length).join("") === closing) return j;
      }
      return -1;
    }
    while (i < n) {
      var two = chars[i] + (chars[i + 1] || "");
      var close = null, open = 0;
      if (two === "$$") { close = "$$"; open = 2; }
      else if (two === "\\[") { close = "\\]"; open = 2; }
      else if (two === "\\(") { close = "\\)"; open = 2; }
      else if (two === "\\$") { i += 2; continue; }
      else if (chars[i] === "$") { close = "$"; open = 1; }
      if (close) {
        var end = find(i + open, close);
        if (end > i) { ranges.push([i, end + close.length]); i = end + close.length; continue; }
      }
      i++;
    }
    return ranges;
  }
  var MATH = mathRanges();

  function snap(offset, side) {
    for (var k = 0; k < MATH.length; k++) {
      if (offset > MATH[k][0] && offset < MATH[k][1]) return side === "start" ? MATH[k][0] : MATH[k][1];
    }
    return offset;
  }

  // A step label is drawn on the transcript only where its quote still is; one a correction moved
  // away (needs_review) is listed, not painted over unrelated text.
  function placed(s) {
    return !s.needs_review && s.end <= chars.length && (!s.quote || chars.slice(s.start, s.end).join("") === s.quote);
  }

  function renderTranscript() {
    var cuts = { 0: true };
    cuts[chars.length] = true;
    MATH.forEach(function (r) { cuts[r[0]] = true; cuts[r[1]] = true; });
    state.step_labels.forEach(function (s) {
      if (placed(s)) { cuts[snap(s.start, "start")] = true; cuts[snap(s.end, "end")] = true; }
    });
    var points = Object.keys(cuts).map(Number).sort(function (a, b) { return a - b; });
    transcriptEl.textContent = "";
    for (var p = 0; p < points.length - 1; p++) {
      var start = points[p], end = points[p + 1];
      if (end <= start) continue;
      var isMath = MATH.some(function (r) { return start >= r[0] && end <= r[1]; });
      var covering = [];
      state.step_labels.forEach(function (s, index) { if (placed(s) && s.start < end && s.end > start) covering.push(index); });
      var span = el("span", { "class": "seg" + (isMath ? " math math-seg" : ""), "data-start": start, "data-end": end },
                    chars.slice(start, end).join(""));
      if (covering.length) {
        var last = state.step_labels[covering[covering.length - 1]];
        span.classList.add("step", "step-" + last.verdict);
        span.setAttribute("data-steps", covering.join(" "));
        span.title = covering.map(function (i) { return verdictName(state.step_labels[i].verdict); }).join(", ");
      }
      transcriptEl.appendChild(span);
    }
    RM.renderMath(transcriptEl);
  }

  function verdictName(value) {
    var found = config.verdicts.filter(function (v) { return v[0] === value; })[0];
    return found ? found[1] : value;
  }

  function renderSteps() {
    var list = $("step-list");
    list.textContent = "";
    state.step_labels.forEach(function (s, index) {
      var li = el("li", { tabindex: "0", "data-step": index });
      li.appendChild(el("span", { "class": "verdict verdict-" + s.verdict }, verdictName(s.verdict)));
      if (!placed(s)) {
        li.classList.add("needs-review");
        li.appendChild(el("span", { "class": "badge warn", title: "The transcript was corrected: this text is gone or occurs several times. Select the passage again, then remove this one." }, "needs review"));
        var old = s.quote || "";
        li.appendChild(el("span", { "class": "q math" }, old.length > 160 ? old.slice(0, 160) + "…" : old));
      } else {
        li.appendChild(el("span", { "class": "q math" }, stepQuote(s)));
      }
      var del = el("button", { type: "button", "data-remove": index, title: "Remove (Delete)" }, "×");
      if (!config.editable) del.disabled = true;
      li.appendChild(del);
      var extra = [s.sub_question, s.comment].filter(Boolean).join(" · ");
      if (extra) li.appendChild(el("span", { "class": "c" }, extra));
      list.appendChild(li);
    });
    RM.renderMath(list);
    $("no-steps").hidden = state.step_labels.length > 0;
    $("step-count").textContent = state.step_labels.length ? String(state.step_labels.length) : "";
  }

  // The quoted passage of a step label, cut after about 160 characters but never inside a
  // formula (an unpaired $ would show raw TeX instead of rendered math).
  function stepQuote(s) {
    var end = s.end;
    if (end - s.start > 160) end = Math.max(s.start, snap(s.start + 160, "start"));
    var quote = chars.slice(s.start, end).join("");
    return end < s.end ? quote + "…" : quote;
  }

  // The sub-question a passage lies in: the last sub-question marker such as "(2)" written at
  // or before its start (not inside a formula), else the sub-question being scored.
  function subQuestionAt(start) {
    var text = chars.slice(0, Math.min(chars.length, start + 6)).join("");
    var best = "", bestAt = -1;
    groups.forEach(function (g) {
      if (!g.label) return;
      var inner = g.label.replace(/^[(（]|[)）]$/g, "");
      var pattern = new RegExp("(^|[^\\w$])[(（]" + inner.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "[)）]", "g");
      var match;
      while ((match = pattern.exec(text)) !== null) {
        var at = match.index + match[1].length;
        if (at <= start && at > bestAt && snap(at, "start") === at) { bestAt = at; best = g.label; }
        pattern.lastIndex = match.index + 1;
      }
    });
    return best;
  }

  function renderAll() { renderForm(); renderTranscript(); renderSteps(); }

  // --- selecting a passage ------------------------------------------------------------------

  function pointOffset(node, offset, side) {
    var host = node.nodeType === 3 ? node.parentElement : node;
    if (host === transcriptEl) {
      var child = transcriptEl.childNodes[offset];
      return child && child.getAttribute ? Number(child.getAttribute("data-start")) : chars.length;
    }
    var seg = host.closest ? host.closest(".seg") : null;
    if (!seg || !transcriptEl.contains(seg)) return null;
    var start = Number(seg.getAttribute("data-start")), end = Number(seg.getAttribute("data-end"));
    if (seg.classList.contains("math-seg")) return side === "start" ? start : end;
    if (node.nodeType === 3) return start + Array.from(node.data.slice(0, offset)).length;
    return offset === 0 ? start : end;
  }

  function selectedSpan() {
    var sel = window.getSelection();
    if (!sel || !sel.rangeCount || sel.isCollapsed) return null;
    var range = sel.getRangeAt(0);
    if (!transcriptEl.contains(range.commonAncestorContainer) && range.commonAncestorContainer !== transcriptEl) return null;
    var start = pointOffset(range.startContainer, range.startOffset, "start");
    var end = pointOffset(range.endContainer, range.endOffset, "end");
    if (start === null || end === null) return null;
    while (start < end && /\s/.test(chars[start])) start++;
    while (end > start && /\s/.test(chars[end - 1])) end--;
    return end > start ? { start: start, end: end } : null;
  }

  function openStepForm() {
    if (!config.editable) return;
    var span = selectedSpan();
    if (!span) { status("Select a passage of the student answer first, then press e.", "bad"); return; }
    pendingStep = span;
    $("step-quote").textContent = chars.slice(span.start, span.end).join("");
    var g = groups[focus.group];
    $("step-sub").value = subQuestionAt(span.start) || (g && g.label ? g.label : "");
    $("step-comment").value = "";
    $("step-form").hidden = false;
    var checked = document.querySelector('input[name="step-verdict"]:checked');
    (checked || document.querySelector('input[name="step-verdict"]')).focus();
  }

  // --- "transcript wrong here": back to the OCR correction queue ------------------------------

  var pendingFlag = null;

  function openFlagForm() {
    if (!config.urls.flag) return;
    var span = selectedSpan();
    if (!span) { status("Select the wrong passage of the student answer first, then press t.", "bad"); return; }
    pendingFlag = span;
    $("flag-quote").textContent = chars.slice(span.start, span.end).join("");
    $("flag-note").value = "";
    $("flag-form").hidden = false;
    $("flag-note").focus();
  }

  function closeFlagForm() {
    $("flag-form").hidden = true;
    pendingFlag = null;
  }

  function sendFlag() {
    if (!pendingFlag) return;
    var body = { start: pendingFlag.start, end: pendingFlag.end, note: $("flag-note").value };
    fetch(config.urls.flag, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": RM.csrfToken() },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (data) { return { ok: r.ok, data: data }; });
    }).then(function (result) {
      if (!result.ok) { status(result.data.detail || "Could not send the flag.", "bad"); return; }
      closeFlagForm();
      status("Sent back to the correction queue: “" + result.data.quote.slice(0, 60) + "”.", "ok");
    }, function () { status("Could not send the flag: the network failed. Try again.", "bad"); });
  }

  function closeStepForm() {
    $("step-form").hidden = true;
    pendingStep = null;
  }

  function addStep() {
    if (!pendingStep) return;
    var verdict = document.querySelector('input[name="step-verdict"]:checked').value;
    state.step_labels.push({
      start: pendingStep.start, end: pendingStep.end, quote: chars.slice(pendingStep.start, pendingStep.end).join(""),
      prefix: chars.slice(Math.max(0, pendingStep.start - 32), pendingStep.start).join(""),
      suffix: chars.slice(pendingStep.end, pendingStep.end + 32).join(""),
      verdict: verdict, comment: $("step-comment").value, sub_question: $("step-sub").value, checkpoint: null
    });
    state.step_labels.sort(function (a, b) { return a.start - b.start || a.end - b.end; });
    closeStepForm();
    window.getSelection().removeAllRanges();
    renderTranscript(); renderSteps(); changed();
  }

  function removeStep(index) {
    if (!config.editable) return;
    state.step_labels.splice(index, 1);
    renderTranscript(); renderSteps(); changed();
  }

  // --- saving -------------------------------------------------------------------------------

  function status(text, kind) {
    var s = $("save-status");
    s.textContent = text;
    s.className = kind || "";
  }

  function payload() {
    return {
      sub_scores: Object.assign({}, state.sub_scores),
      total: groups.length === 1 && groups[0].label === "" ? state.total : undefined,
      checkpoint_marks: Object.assign({}, state.checkpoint_marks),
      override_reason: state.override_reason,
      comment: state.comment,
      step_labels: state.step_labels.map(function (s) {
        return { start: s.start, end: s.end, quote: s.quote, prefix: s.prefix || "", suffix: s.suffix || "",
                 verdict: s.verdict, comment: s.comment,
                 sub_question: s.sub_question || "", checkpoint: s.checkpoint };
      })
    };
  }

  function localKey() { return "realmath-label-draft-" + config.responseId; }

  function changed() {
    renderForm();
    if (!config.editable) return;
    draftPending = true;
    try { localStorage.setItem(localKey(), JSON.stringify({ at: Date.now(), base_version: version, payload: payload() })); }
    catch (e) { /* private mode: the server draft is enough */ }
    clearTimeout(draftTimer);
    draftTimer = setTimeout(saveDraft, DRAFT_DELAY_MS);
    status("Editing… (draft saves itself)");
  }

  function saveDraft(keepalive) {
    clearTimeout(draftTimer);
    if (!draftPending || !config.editable) return Promise.resolve();
    draftPending = false;
    var seconds = active.take();
    var body = { base_version: version, payload: payload(), annotation: config.label ? config.label.id : null,
                 active_seconds_delta: seconds };
    return RM.sendJson(config.urls.draft, "PUT", body, { keepalive: keepalive }).then(function (res) {
      if (!res.ok) active.giveBack(seconds);
      if (res.ok) {
        status("Draft kept " + new Date().toLocaleTimeString() + (version ? " · saved version " + version : ""), "ok");
      } else {
        draftPending = true;
        status("The draft was not kept (" + res.status + "); it stays in this browser.", "bad");
      }
    }).catch(function () {
      active.giveBack(seconds);
      draftPending = true;
      status("Offline: the draft stays in this browser until the server answers.", "bad");
    });
  }

  function save(submit) {
    if (!config.editable || busy) return;
    var result = check();
    if (submit && result.overrides && !state.override_reason.trim()) {
      $("form-errors").textContent = "The points differ from what the marked checkpoints give: write the reason (o), then submit.";
      $("override_reason").focus();
      return;
    }
    busy = true;
    clearTimeout(draftTimer);
    var seconds = active.take();
    var body = Object.assign({ base_version: version, submit: !!submit, active_seconds_delta: seconds }, payload());
    status(submit ? "Submitting…" : "Saving…");
    RM.sendJson(config.urls.save, "PUT", body).then(function (answer) {
      busy = false;
      if (answer.status !== 200 && answer.status !== 201) active.giveBack(seconds);
      if (answer.status === 200 || answer.status === 201) {
        version = answer.data.version;
        config.label = answer.data;
        draftPending = false;
        try { localStorage.removeItem(localKey()); } catch (e) { /* ignore */ }
        $("conflict").hidden = true;
        $("draft-note").hidden = true;
        $("form-errors").textContent = "";
        status((submit ? "Submitted" : "Saved") + " version " + version + " at " + new Date().toLocaleTimeString(), "ok");
        if (submit) window.location.assign(config.urls.page + (config.urls.page.indexOf("?") >= 0 ? "&" : "?") + "submitted=1");
      } else if (answer.status === 409) {
        showConflict(answer.data);
        status("Not saved: someone saved this label meanwhile. Compare below.", "bad");
      } else if (answer.status === 400) {
        showErrors(answer.data);
        status("Not saved: fix what is marked.", "bad");
      } else {
        $("form-errors").textContent = (answer.data && answer.data.detail) || ("The server answered " + answer.status + ".");
        status("Not saved.", "bad");
      }
    }).catch(function () {
      busy = false;
      active.giveBack(seconds);
      status("Not saved: no connection. Your draft stays in this browser; try again.", "bad");
    });
  }

  function showErrors(data) {
    var errors = (data && data.errors) || {};
    var lines = [];
    Object.keys(errors).forEach(function (field) {
      (errors[field] || []).forEach(function (m) { lines.push(m); });
    });
    if (!lines.length && data && data.detail) lines.push(data.detail);
    $("form-errors").textContent = lines.join(" ");
  }

  function summary(label) {
    if (!label) return {};
    var rows = {};
    groups.forEach(function (g) {
      var v = g.label === "" ? label.total : (label.sub_scores || {})[g.label];
      rows[g.label === "" ? "Total" : g.label] = v === undefined || v === null || v === "" ? "—" : String(Number(v));
    });
    if (groups[0].label !== "") {
      var t = 0, any = false;
      groups.forEach(function (g) { var v = (label.sub_scores || {})[g.label]; if (v !== undefined && v !== null && v !== "") { t += Number(v); any = true; } });
      rows.Total = any ? String(Math.round(t * 100) / 100) : "—";
    }
    rows["Checkpoints marked"] = String(Object.keys(label.checkpoint_marks || {}).length);
    rows["Step labels"] = String((label.step_labels || []).length);
    rows.Comment = label.comment || "";
    rows["Override reason"] = label.override_reason || "";
    return rows;
  }

  function showConflict(data) {
    var box = $("conflict");
    box.textContent = "";
    box.appendChild(el("h2", {}, "Not saved: this label changed since you loaded it"));
    box.appendChild(el("p", {}, data.detail || ""));
    var theirs = data.theirs;
    var mine = summary(data.yours), other = summary(theirs);
    var table = el("table", { "class": "grid", id: "conflict-table" });
    var head = el("tr");
    head.appendChild(el("th", {}, ""));
    head.appendChild(el("th", {}, "Yours (from version " + data.yours.base_version + ")"));
    head.appendChild(el("th", {}, theirs ? "Saved: version " + theirs.version + " by " + (theirs.updated_by || "?") : "Saved"));
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var body = el("tbody");
    Object.keys(mine).forEach(function (key) {
      var tr = el("tr");
      tr.appendChild(el("th", {}, key));
      var a = el("td", {}, mine[key]), b = el("td", {}, other[key] === undefined ? "" : other[key]);
      if (mine[key] !== other[key]) { a.className = "diff"; b.className = "diff"; }
      tr.appendChild(a); tr.appendChild(b); body.appendChild(tr);
    });
    table.appendChild(body);
    var wrap = el("div", { "class": "table-wrap" });
    wrap.appendChild(table);
    box.appendChild(wrap);
    var actions = el("p", { "class": "form-actions" });
    var keep = el("button", { type: "button", "class": "primary", id: "keep-mine" }, "Save mine over version " + (theirs ? theirs.version : "?"));
    var take = el("button", { type: "button", id: "take-theirs" }, "Take the saved version");
    keep.addEventListener("click", function () {
      if (theirs) version = theirs.version;
      box.hidden = true;
      save(false);
    });
    take.addEventListener("click", function () {
      if (theirs) { version = theirs.version; config.label = theirs; state = stateFrom(theirs); }
      box.hidden = true;
      draftPending = true;
      renderAll(); saveDraft();
      status("Loaded version " + version + ".", "ok");
    });
    actions.appendChild(take); actions.appendChild(keep);
    box.appendChild(actions);
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
  }

  // --- keyboard -------------------------------------------------------------------------------

  function moveGroup(delta) {
    focus.group = Math.max(0, Math.min(groups.length - 1, focus.group + delta));
    digitBuffer.text = "";
    renderForm();
    var box = $("group-" + focus.group);
    if (box) box.scrollIntoView({ block: "nearest" });
  }

  function moveCheckpoint(delta) {
    var n = groups[focus.group].checkpoints.length;
    if (!n) return;
    focus.checkpoint[focus.group] = Math.max(0, Math.min(n - 1, focus.checkpoint[focus.group] + delta));
    renderForm();
    var cp = focusedCheckpoint();
    var ref = cp && document.querySelector('.reference .checkpoint[data-checkpoint="' + cp.id + '"]');
    if (ref) ref.scrollIntoView({ block: "nearest" });
  }

  function typeDigit(key) {
    if (!config.editable) return;
    var index = focus.group, now = Date.now();
    if (now - digitBuffer.time > DIGIT_WINDOW_MS || digitBuffer.group !== index) digitBuffer.text = "";
    var text = digitBuffer.text;
    if (key === ".") text = (text || String(pointsOf(index) || "0")).replace(/\..*$/, "") + ".";
    else {
      text = text + key;
      var g = groups[index];
      var limit = g.max !== null ? cents(g.max) : cents(config.fullScore);
      if (!/^\d+(\.\d{0,2})?$/.test(text) || cents(text.replace(/\.$/, "")) > limit) text = key;
    }
    digitBuffer = { text: text, time: now, group: index };
    setPoints(index, text.replace(/\.$/, ""), false);
    changed();
  }

  function onKey(event) {
    var target = event.target;
    var typing = RM.isTyping(target);
    var flagForm = $("flag-form");
    if (flagForm && flagForm.contains(target)) {
      if (event.key === "Escape") { closeFlagForm(); target.blur(); }
      else if (event.key === "Enter") { event.preventDefault(); sendFlag(); }
      return;
    }
    var inStepForm = $("step-form").contains(target);
    var mod = event.ctrlKey || event.metaKey;
    if (event.key === "Escape") {
      if (!$("step-form").hidden) closeStepForm();
      if (typing || inStepForm) target.blur();
      return;
    }
    if (mod && event.key === "Enter") { event.preventDefault(); save(true); return; }
    if (mod && (event.key === "s" || event.key === "S")) { event.preventDefault(); save(false); return; }
    if (inStepForm) {
      if (event.key === "Enter") { event.preventDefault(); addStep(); return; }
      if (!typing && /^[1-9]$/.test(event.key)) {
        var radios = document.querySelectorAll('input[name="step-verdict"]');
        var radio = radios[Number(event.key) - 1];
        if (radio) { radio.checked = true; radio.focus(); event.preventDefault(); }
      }
      return;
    }
    if (typing || mod || event.altKey) return;
    if (target.closest && target.closest("#step-list") && (event.key === "Delete" || event.key === "Backspace")) {
      var li = target.closest("li");
      if (li) { event.preventDefault(); removeStep(Number(li.getAttribute("data-step"))); }
      return;
    }
    if (target.matches && target.matches("button, a") && event.key === "Enter") return;
    var key = event.key;
    var handled = true;
    if (/^[0-9.]$/.test(key)) typeDigit(key);
    else if (key === "j" || key === "ArrowDown") moveGroup(1);
    else if (key === "k" || key === "ArrowUp") moveGroup(-1);
    else if (key === "l" || key === "ArrowRight") moveCheckpoint(1);
    else if (key === "h" || key === "ArrowLeft") moveCheckpoint(-1);
    else if (key === "Backspace") { if (config.editable) { setPoints(focus.group, "", false); changed(); } }
    else if (key === "r" || key === "p" || key === "x" || key === "u") {
      if (config.editable) mark(focus.group, focus.checkpoint[focus.group],
        { r: "reached", p: "partly", x: "not_reached", u: null }[key]);
    }
    else if (key === "a") {
      var prop = proposal(focus.group);
      if (prop && config.editable) { setPoints(focus.group, String(prop.low / 100), true); changed(); }
    }
    else if (key === "e") openStepForm();
    else if (key === "t" && config.urls.flag) openFlagForm();
    else if (key === "c") $("comment").focus();
    else if (key === "o") $("override_reason").focus();
    else if (key === "s") save(false);
    else if (key === "]") {
      leave(function () { if (config.urls.next) window.location.assign(config.urls.next); else $("next-form").submit(); });
    }
    else if (key === "[") { if (config.urls.previous) leave(function () { window.location.assign(config.urls.previous); }); }
    else if (key === "?") { var s = $("shortcuts"); s.hidden = !s.hidden; }
    else handled = false;
    if (handled) event.preventDefault();
  }

  function leave(go) {
    if (draftPending) saveDraft().then(go, go); else go();
  }

  // --- wiring ---------------------------------------------------------------------------------

  function wire() {
    document.addEventListener("keydown", onKey);
    groupsEl.addEventListener("input", function (event) {
      if (!event.target.matches("input.points")) return;
      var index = Number(event.target.getAttribute("data-index"));
      setPoints(index, event.target.value.trim(), false);
      changed();
    });
    groupsEl.addEventListener("focusin", function (event) {
      var box = event.target.closest(".group");
      if (box) { focus.group = Number(box.getAttribute("data-index")); renderForm(); }
    });
    groupsEl.addEventListener("click", function (event) {
      var li = event.target.closest(".cp");
      if (!li) return;
      var index = Number(li.getAttribute("data-index")), cpIndex = Number(li.getAttribute("data-cp-index"));
      focus.group = index; focus.checkpoint[index] = cpIndex;
      var button = event.target.closest("button[data-mark]");
      if (button && config.editable) {
        var m = button.getAttribute("data-mark");
        var current = state.checkpoint_marks[li.getAttribute("data-cp")];
        mark(index, cpIndex, current === m ? null : m);
      } else renderForm();
    });
    $("override_reason").addEventListener("input", function (e) { state.override_reason = e.target.value; changed(); });
    $("comment").addEventListener("input", function (e) { state.comment = e.target.value; changed(); });
    if (!config.editable) { $("override_reason").disabled = true; $("comment").disabled = true; }
    $("save-button").addEventListener("click", function () { save(false); });
    $("submit-button").addEventListener("click", function () { save(true); });
    document.addEventListener("selectionchange", function () {
      var span = selectedSpan();
      if (span) announceSpan(span);
    });
    if ($("flag-form")) {
      $("flag-send").addEventListener("click", sendFlag);
      $("flag-cancel").addEventListener("click", closeFlagForm);
      // mousedown keeps the selection in the transcript (a click would clear it first)
      $("flag-open").addEventListener("mousedown", function (e) { e.preventDefault(); openFlagForm(); });
    }
    $("step-add").addEventListener("click", addStep);
    $("step-cancel").addEventListener("click", closeStepForm);
    $("step-list").addEventListener("click", function (event) {
      var b = event.target.closest("button[data-remove]");
      if (b) removeStep(Number(b.getAttribute("data-remove")));
    });
    $("step-list").addEventListener("mouseover", function (event) { highlight(event.target.closest("li")); });
    $("step-list").addEventListener("focusin", function (event) { highlight(event.target.closest("li")); });
    transcriptEl.addEventListener("mouseup", function () {
      if (selectedSpan() && config.editable) status("Passage selected: press e to label it.");
    });
    window.addEventListener("pagehide", function () { if (draftPending) saveDraft(true); });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden" && draftPending) saveDraft(true);
    });
  }

  // Tell the scan viewer (static/js/scan_viewer.js) which passage to outline on the page image.
  function announceSpan(span) {
    document.dispatchEvent(new CustomEvent("rm:span", { detail: span }));
  }

  function highlight(li) {
    transcriptEl.querySelectorAll(".seg.hot").forEach(function (s) { s.classList.remove("hot"); });
    if (!li) return;
    var index = li.getAttribute("data-step");
    var step = state.step_labels[Number(index)];
    if (step && placed(step)) announceSpan({ start: step.start, end: step.end });
    transcriptEl.querySelectorAll(".seg[data-steps]").forEach(function (s) {
      if (s.getAttribute("data-steps").split(" ").indexOf(index) >= 0) s.classList.add("hot");
    });
  }

  // JSON with sorted keys: two payloads with the same content compare equal whatever their key order.
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value && typeof value === "object") {
      return "{" + Object.keys(value).sort().map(function (k) { return JSON.stringify(k) + ":" + canonical(value[k]); }).join(",") + "}";
    }
    if (typeof value === "number") return JSON.stringify(String(value));
    return JSON.stringify(value === undefined ? null : value);
  }

  function restoreDraft() {
    var note = $("draft-note");
    var server = config.draft;
    var local = null;
    try { local = JSON.parse(localStorage.getItem(localKey()) || "null"); } catch (e) { local = null; }
    var serverTime = server ? Date.parse(server.updated) : 0;
    var chosen = null;
    if (local && local.at > serverTime + 2000 && (!config.label || local.at > Date.parse(config.label.updated))) {
      chosen = { payload: local.payload, base_version: local.base_version, when: new Date(local.at), where: "this browser" };
    } else if (server) {
      chosen = { payload: server.payload, base_version: server.base_version, when: new Date(serverTime), where: "the server" };
    }
    if (!chosen || !config.editable) return;
    var saved = canonical(payload());  // the label as saved (or the empty form)
    state = Object.assign(emptyState(), stateFrom(null), chosen.payload || {});
    state.step_labels = state.step_labels || [];
    if (canonical(payload()) === saved) {
      // The draft holds nothing the label does not (one's own autosave of what was then saved,
      // even one that reached the server after the save): nothing is restored, nothing is said.
      state = stateFrom(config.label);
      return;
    }
    version = chosen.base_version;
    draftPending = chosen.where === "this browser";
    var text = "Unsaved changes from " + chosen.when.toLocaleString() + " are back (kept in " + chosen.where +
      "): save or submit to keep them in the label.";
    if (config.label && chosen.base_version !== config.label.version) {
      text += " It started from version " + chosen.base_version + "; the label is now at version " +
        config.label.version + ": saving will show both to compare.";
    }
    note.textContent = text;
    note.hidden = false;
  }

  buildForm();
  state = stateFrom(config.label);
  restoreDraft();
  wire();
  renderAll();
  if (draftPending) saveDraft();
})();
