/* Correction screen: the page image in the one scan viewer (static/js/scan_viewer.js: zoom,
 * pan, its keys), transcript editor with live KaTeX preview, low-confidence highlights linked to
 * their boxes on the image, autosave with version checks, keyboard shortcuts (listed on the
 * page). All student text goes through textContent. An ES module. */
import { ScanViewer, drawBoxes, placeBox } from "./scan_viewer.js";

{

  var cfg = JSON.parse(document.getElementById("editor-config").textContent);
  var textarea = document.getElementById("transcript-text");
  var backdrop = document.getElementById("backdrop");
  var preview = document.getElementById("preview");
  var previewWrap = document.getElementById("preview-wrap");
  var statusEl = document.getElementById("save-status");
  var messageEl = document.getElementById("save-message");
  var badge = document.getElementById("transcript-status");
  var rawOutput = document.getElementById("raw-output");
  var lowSummary = document.getElementById("low-summary");
  var revisionList = document.getElementById("revision-list");

  var state = {
    version: cfg.version,
    savedText: textarea.value,
    saving: null,
    queued: null,
    stale: false,
    autosaveTimer: null
  };

  // ---------------------------------------------------------------- image viewer (zoom, pan)
  var stage = document.getElementById("stage");
  var img = document.getElementById("page-img");
  var boxEl = document.getElementById("box-highlight");
  var boxLayer = document.getElementById("box-layer");
  var viewer = null;

  if (stage) {
    viewer = new ScanViewer(document.getElementById("viewer"), stage, { zoomLabel: document.getElementById("zoom-level") });
    viewer.bindButtons(document.querySelector(".ocr-image-panel")).bindKeys();
    viewer.setPage(cfg.imageWidth, cfg.imageHeight);
    document.getElementById("show-processed").addEventListener("change", function (e) {
      img.src = e.target.checked ? img.getAttribute("data-processed") : img.getAttribute("data-web");
    });
    document.getElementById("show-boxes").addEventListener("change", function (e) {
      boxLayer.hidden = !e.target.checked;
    });
  }

  function showBox(token) {
    if (!stage || !token || !token.b) {
      if (boxEl) boxEl.hidden = true;
      return false;
    }
    placeBox(boxEl, token.b, 3);
    boxEl.hidden = false;
    viewer.reveal(token.b, 1.5);
    return true;
  }

  // ---------------------------------------------------------------- low-confidence characters
  var tokens = cfg.tokens || [];
  var lowTokens = tokens.filter(function (t) { return t.c !== null && t.c < cfg.lowConfidence; });
  var rawTokenAt = new Array(cfg.rawText.length);
  tokens.forEach(function (t, i) { for (var k = t.o; k < t.o + t.n && k < rawTokenAt.length; k++) rawTokenAt[k] = i; });
  var marks = [];  // [{start, end, token}] in the current text

  function lcsPairs(a, b) {
    // Longest common subsequence of two arrays of lines: matching index pairs, in order.
    var n = a.length, m = b.length, i, j;
    var table = [];
    for (i = 0; i <= n; i++) table.push(new Uint16Array(m + 1));
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    var pairs = [];
    i = 0; j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) { pairs.push([i, j]); i++; j++; }
      else if (table[i + 1][j] >= table[i][j + 1]) i++;
      else j++;
    }
    return pairs;
  }

  function starts(lines) {
    var out = [], offset = 0;
    lines.forEach(function (l) { out.push(offset); offset += l.length + 1; });
    return out;
  }

  function mapLine(map, rawLine, rawStart, curLine, curStart) {
    // Map characters of two versions of one line through their common prefix and suffix.
    var p = 0;
    while (p < rawLine.length && p < curLine.length && rawLine[p] === curLine[p]) { map[rawStart + p] = curStart + p; p++; }
    var s = 0;
    while (s < rawLine.length - p && s < curLine.length - p &&
           rawLine[rawLine.length - 1 - s] === curLine[curLine.length - 1 - s]) {
      map[rawStart + rawLine.length - 1 - s] = curStart + curLine.length - 1 - s;
      s++;
    }
  }

  function alignRawToCurrent(raw, cur) {
    // For each raw character, its index in the current text, or -1 when it was edited away.
    var map = new Int32Array(raw.length).fill(-1);
    var a = raw.split("\n"), b = cur.split("\n");
    var sa = starts(a), sb = starts(b);
    var pairs = a.length * b.length <= 250000 ? lcsPairs(a, b) : [];
    var pi = 0, pj = 0;
    pairs.concat([[a.length, b.length]]).forEach(function (pair) {
      // Unmatched lines between two matches are compared in order, line by line.
      for (var k = 0; k < Math.min(pair[0] - pi, pair[1] - pj); k++) {
        mapLine(map, a[pi + k], sa[pi + k], b[pj + k], sb[pj + k]);
      }
      if (pair[0] < a.length) mapLine(map, a[pair[0]], sa[pair[0]], b[pair[1]], sb[pair[1]]);
      pi = pair[0] + 1; pj = pair[1] + 1;
    });
    return map;
  }

  function computeMarks(text) {
    marks = [];
    if (!lowTokens.length) return;
    var map = alignRawToCurrent(cfg.rawText, text);
    lowTokens.forEach(function (t) {
      var first = -1, last = -1;
      for (var k = t.o; k < t.o + t.n; k++) {
        var j = map[k];
        if (j < 0) continue;
        if (first < 0) first = j;
        last = j;
      }
      if (first >= 0) marks.push({ start: first, end: last + 1, token: t });
    });
    marks.sort(function (x, y) { return x.start - y.start; });
  }

  function renderBackdrop(text) {
    backdrop.textContent = "";
    var cursor = 0;
    marks.forEach(function (m) {
      if (m.start < cursor) return;
      backdrop.appendChild(document.createTextNode(text.slice(cursor, m.start)));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(m.start, m.end);
      backdrop.appendChild(mark);
      cursor = m.end;
    });
    // A trailing newline needs a character after it to take up a line, as in the textarea.
    backdrop.appendChild(document.createTextNode(text.slice(cursor) + "\u200b"));
    backdrop.scrollTop = textarea.scrollTop;
    lowSummary.textContent = marks.length
      ? interpolate(ngettext("%s low-confidence character marked in the transcript (Alt+L steps through them).",
                             "%s low-confidence characters marked in the transcript (Alt+L steps through them).",
                             marks.length), [marks.length])
      : (lowTokens.length ? gettext("All low-confidence characters were edited.") : "");
  }

  function renderRawOutput() {
    if (!rawOutput) return;
    var raw = cfg.rawText;
    if (!raw) { rawOutput.textContent = cfg.ocrPending ? gettext("OCR is running…") : gettext("No OCR output."); return; }
    var i = 0;
    while (i < raw.length) {
      var ti = rawTokenAt[i];
      var t = ti === undefined ? null : tokens[ti];
      if (t && t.c !== null && t.c < cfg.lowConfidence) {
        var span = document.createElement("span");
        span.className = "low";
        span.textContent = raw.slice(t.o, t.o + t.n);
        span.title = interpolate(gettext("confidence %s%"), [Math.round(t.c * 100)]) +
          (t.b ? "" : " " + gettext("(this engine gives no position)"));
        span.setAttribute("data-token", String(ti));
        rawOutput.appendChild(span);
        i = t.o + t.n;
      } else {
        var j = i + 1;
        while (j < raw.length && !(rawTokenAt[j] !== undefined && tokens[rawTokenAt[j]].c !== null &&
               tokens[rawTokenAt[j]].c < cfg.lowConfidence)) j++;
        rawOutput.appendChild(document.createTextNode(raw.slice(i, j)));
        i = j;
      }
    }
    rawOutput.addEventListener("click", function (e) {
      var target = e.target.closest("[data-token]");
      if (!target) return;
      var previous = rawOutput.querySelector(".selected");
      if (previous) previous.classList.remove("selected");
      target.classList.add("selected");
      showBox(tokens[Number(target.getAttribute("data-token"))]);
    });
  }

  function drawBoxLayer() {
    if (!boxLayer) return;
    drawBoxes(boxLayer, lowTokens.filter(function (t) { return t.b; }).map(function (t) { return { box: t.b }; }), "low-box");
  }

  function markAtCaret() {
    var pos = textarea.selectionStart;
    for (var i = 0; i < marks.length; i++) {
      if (pos >= marks[i].start && pos <= marks[i].end && textarea.selectionEnd <= marks[i].end) return marks[i];
    }
    return null;
  }

  function stepLow(direction) {
    if (!marks.length) return;
    var pos = direction > 0 ? textarea.selectionEnd : textarea.selectionStart;
    var target = null, i;
    if (direction > 0) {
      for (i = 0; i < marks.length; i++) if (marks[i].start >= pos) { target = marks[i]; break; }
      target = target || marks[0];
    } else {
      for (i = marks.length - 1; i >= 0; i--) if (marks[i].end < pos) { target = marks[i]; break; }
      target = target || marks[marks.length - 1];
    }
    textarea.focus();
    textarea.setSelectionRange(target.start, target.end);
    showBox(target.token);
  }

  // ---------------------------------------------------------------- preview
  var previewTimer = null;
  function renderPreview() {
    preview.textContent = textarea.value;
    if (window.RealMath && window.RealMath.renderMath) window.RealMath.renderMath(previewWrap);
  }

  function refresh() {
    computeMarks(textarea.value);
    renderBackdrop(textarea.value);
    window.clearTimeout(previewTimer);
    previewTimer = window.setTimeout(renderPreview, 250);
  }

  // ---------------------------------------------------------------- saving
  function setStatus(text, kind) {
    statusEl.textContent = text;
    statusEl.className = "small " + (kind || "muted");
  }

  function showMessage(text, kind) {
    messageEl.textContent = "";
    if (!text) { messageEl.hidden = true; return; }
    messageEl.className = "ocr-alert " + (kind || "bad");
    messageEl.appendChild(document.createTextNode(text));
    messageEl.hidden = false;
  }

  function setBadge(status) {
    var labels = { draft: gettext("Draft"), verified: gettext("Verified"), changed: gettext("Changed since verified") };
    badge.textContent = labels[status] || status;
    badge.className = "badge " + (status === "verified" ? "ok" : status === "changed" ? "warn" : "");
  }

  function addRevision(version, kind) {
    var li = document.createElement("li");
    var v = document.createElement("span");
    v.className = "mono";
    v.textContent = "v" + version;
    li.appendChild(v);
    li.appendChild(document.createTextNode(" " + kind + " · " + gettext("you") + " · " + new Date().toLocaleTimeString()));
    var empty = revisionList.querySelector(".muted");
    if (empty) empty.remove();
    revisionList.insertBefore(li, revisionList.firstChild);
  }

  var RANK = { autosave: 0, save: 1, verify: 2 };

  function save(action) {
    if (state.stale) return Promise.reject(new Error("stale"));
    if (state.saving) {
      if (!state.queued || RANK[action] > RANK[state.queued]) state.queued = action;
      return state.saving.then(function () {
        var next = state.queued;
        state.queued = null;
        return next ? save(next) : null;
      });
    }
    window.clearTimeout(state.autosaveTimer);
    var text = textarea.value;
    if (action === "autosave" && text === state.savedText) return Promise.resolve(null);
    setStatus(action === "verify" ? gettext("verifying…") : gettext("saving…"));
    state.saving = window.RealMath.sendJson(cfg.saveUrl, "POST", { text: text, base_version: state.version, action: action })
    .then(function (res) {
      state.saving = null;
      if (res.ok) {
        var changed = res.data.version !== state.version;
        state.version = res.data.version;
        state.savedText = text;
        setBadge(res.data.status);
        if (changed) addRevision(res.data.version, action === "verify" ? gettext("Verified") : action === "autosave" ? gettext("Autosave") : gettext("Save"));
        var when = new Date().toLocaleTimeString();
        setStatus(interpolate(action === "verify" ? gettext("verified · version %s · %s") : gettext("saved · version %s · %s"),
                              [state.version, when]), "ok-text");
        if (action === "verify" && res.data.response) {
          showMessage(interpolate(gettext("Verified. Response #%s now holds this text (response version %s)."),
                                  [res.data.response, res.data.response_version]), "ok");
        } else if (action !== "autosave") {
          showMessage("");
        }
        return res.data;
      }
      if (res.status === 409) {
        state.stale = true;
        setStatus(gettext("not saved"), "error");
        showMessage(res.data.detail || gettext("Someone else saved this transcript; reload to see their version."));
        return Promise.reject(new Error("stale"));
      }
      setStatus(gettext("not saved"), "error");
      showMessage(res.data.detail || interpolate(gettext("Not saved: the server answered %s."), [res.status]));
      return Promise.reject(new Error("refused"));
    }, function (err) {
      state.saving = null;
      setStatus(gettext("not saved (network); retrying…"), "error");
      scheduleAutosave(5000);
      return Promise.reject(err);
    });
    return state.saving;
  }

  function scheduleAutosave(delay) {
    window.clearTimeout(state.autosaveTimer);
    if (state.stale) return;
    state.autosaveTimer = window.setTimeout(function () { save("autosave").catch(function () {}); }, delay || 1500);
  }

  function go(url) {
    if (!url) return;
    if (textarea.value === state.savedText || state.stale) { window.location.href = url; return; }
    save("save").then(function () { window.location.href = url; }, function () {});
  }

  textarea.addEventListener("input", function () {
    if (textarea.value !== state.savedText) setStatus(gettext("unsaved changes"), "warn-text");
    refresh();
    scheduleAutosave();
  });
  textarea.addEventListener("scroll", function () { backdrop.scrollTop = textarea.scrollTop; });
  textarea.addEventListener("click", function () {
    var m = markAtCaret();
    if (m) showBox(m.token);
  });
  document.getElementById("save-button").addEventListener("click", function () { save("save").catch(function () {}); });
  document.getElementById("verify-button").addEventListener("click", function () { save("verify").catch(function () {}); });
  window.addEventListener("beforeunload", function (e) {
    if (textarea.value !== state.savedText && !state.stale) { e.preventDefault(); e.returnValue = ""; }
  });

  document.addEventListener("keydown", function (e) {
    var key = e.key;
    if ((e.ctrlKey || e.metaKey) && !e.altKey && (key === "s" || key === "S")) {
      e.preventDefault(); save("save").catch(function () {}); return;
    }
    if ((e.ctrlKey || e.metaKey) && key === "Enter") {
      e.preventDefault();
      if (!document.getElementById("verify-button").disabled) save("verify").catch(function () {});
      return;
    }
    if (!e.altKey || e.ctrlKey || e.metaKey) return;
    var handled = true;
    if (key === "ArrowRight" || key === "PageDown") go(cfg.nextUrl);
    else if (key === "ArrowLeft" || key === "PageUp") go(cfg.previousUrl);
    else if (e.code === "KeyL") stepLow(e.shiftKey ? -1 : 1);
    else if (e.code === "KeyP" && stage) { var p = document.getElementById("show-processed"); p.checked = !p.checked; p.dispatchEvent(new Event("change")); }
    else if (e.code === "KeyB" && stage) { var b = document.getElementById("show-boxes"); b.checked = !b.checked; b.dispatchEvent(new Event("change")); }
    else handled = false;
    if (handled) e.preventDefault();
  });

  // While OCR has not finished, wait for it and reload (nothing typed is lost: the box is empty).
  function ocrFinished(page) {
    var done = (page.ocr_runs || []).some(function (r) { return r.status === "done" || r.status === "failed"; });
    if (done && !textarea.value) window.location.reload();
    return done;
  }

  renderRawOutput();
  drawBoxLayer();
  refresh();
  renderPreview();
  if (cfg.ocrPending) window.RealMath.poll(cfg.stateUrl, { first: 1500, every: 2000, onData: ocrFinished });
}
