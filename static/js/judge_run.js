/* Run page: live progress (polls the JSON endpoint), cancel/resume keys, result navigation. */
(function () {
  "use strict";
  var panel = document.getElementById("run-progress");
  if (!panel) { return; }
  var url = panel.getAttribute("data-url");
  // Running when the page was made: a run that has ended by the first poll still needs the
  // reload, or its rows keep reading "Pending" under "Done".
  var startedRunning = panel.getAttribute("data-status") === "running" ? true : null;

  function set(id, value) {
    var el = document.getElementById(id);
    if (el) { el.textContent = (value === null || value === undefined) ? "—" : value; }
  }

  function statusLabel(status) {
    return window.RealMath.statusLabel(status);
  }

  function show(p) {
    var bar = document.getElementById("p-bar");
    if (bar) {
      window.RealMath.setBar(bar, p.percent);
      bar.parentNode.setAttribute("aria-valuenow", p.percent);
      bar.className = p.status === "done" ? "ok" : "";
    }
    var status = statusLabel(p.status) + (p.status === "running" && p.pending ? " · " + interpolate(gettext("%s to go"), [p.pending]) : "");
    if (p.stalled) { status += " · " + gettext("no progress for a while: if its worker stopped, the run is taken over automatically once its claims' lease has passed; Resume re-queues the rest now"); }
    set("p-status", status);
    set("p-count", p.done + " / " + p.total);
    set("p-ok", p.ok); set("p-invalid", p.invalid); set("p-error", p.error); set("p-cached", p.cached);
    set("p-tokens", p.prompt_tokens + p.completion_tokens); set("p-tin", p.prompt_tokens); set("p-tout", p.completion_tokens);
    set("s-calls", p.attempts); set("s-tin", p.prompt_tokens); set("s-tout", p.completion_tokens); set("s-cost", p.cost);
    set("p-cost", p.cost); set("p-latency", p.latency_ms_p50 !== undefined ? p.latency_ms_p50 : p.latency_ms_mean); set("p-p95", p.latency_ms_p95); set("p-elapsed", p.elapsed_s);
    if (p.batch) { showBatch(p.batch); }
    var cancel = document.getElementById("cancel-button");
    var resume = document.getElementById("resume-button");
    if (cancel) { cancel.disabled = !p.can_cancel; }
    if (resume) { resume.disabled = !p.can_resume; }
  }

  // A batch run (the Batch API): the provider's answered requests, the ETA and each batch.
  function clock(iso) {
    if (!iso) { return "—"; }
    var when = new Date(iso);
    return isNaN(when.getTime()) ? iso : when.toLocaleString();
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) { return gettext("unknown yet"); }
    if (seconds < 90) { return interpolate(gettext("%s s"), [seconds]); }
    if (seconds < 5400) { return interpolate(gettext("%s min"), [Math.round(seconds / 60)]); }
    return interpolate(gettext("%s h"), [(seconds / 3600).toFixed(1)]);
  }

  function showBatch(b) {
    var bar = document.getElementById("p-batch-bar");
    if (bar) { window.RealMath.setBar(bar, b.requests_percent); bar.parentNode.setAttribute("aria-valuenow", b.requests_percent); }
    set("p-batch-count", b.requests_answered + " / " + b.requests_total);
    set("p-eta", b.eta ? duration(b.eta_s) + " (" + clock(b.eta) + ")" : duration(null));
    set("p-deadline", clock(b.deadline));
    set("p-parts", b.open_parts);
    set("p-lines-failed", b.lines.failed);
    set("p-next-poll", clock(b.next_poll));
    var body = document.querySelector("#batch-parts tbody");
    if (!body || !b.parts.length) { return; }
    body.textContent = "";
    b.parts.forEach(function (part) {
      var row = document.createElement("tr");
      ["#" + part.number, statusLabel(part.status), part.lines, part.completed, part.failed, part.batch_id || "—"].forEach(function (value, i) {
        var cell = document.createElement("td");
        cell.textContent = value;
        if (i >= 2 && i <= 4) { cell.className = "num"; }
        if (i === 5) { cell.className = "mono small"; }
        if (i === 1) { cell.setAttribute("data-status", part.status); }
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
  }

  // The rows follow the run: when its count of finished answers moves, the table's rows are read
  // again from this page's own address (same page of results, same filters) and swapped in, at
  // most one request at a time and one every ROWS_EVERY ms.
  var table = document.getElementById("results-table");
  var ROWS_EVERY = 2000;
  var rowsSeen = null, rowsBusy = false, rowsLast = 0, rowsWanted = false;

  function refreshRows() {
    if (!table || !table.hasAttribute("data-live-rows")) { return; }
    if (rowsBusy || Date.now() - rowsLast < ROWS_EVERY) { rowsWanted = true; return; }
    rowsBusy = true; rowsWanted = false; rowsLast = Date.now();
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (!html) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("#results-table tbody");
        var body = table.querySelector("tbody");
        if (fresh && body) {
          body.replaceWith(document.importNode(fresh, true));
          window.RealMath.renderMath(table);
          collectRows();
        }
      })
      .catch(function () { rowsWanted = true; })
      .then(function () { rowsBusy = false; if (rowsWanted) { window.setTimeout(refreshRows, ROWS_EVERY); } });
  }

  window.RealMath.poll(url, {
    every: 1000,
    maxDelay: 10000,
    onData: function (p) {
      show(p);
      if (rowsSeen !== null && p.done !== rowsSeen) { refreshRows(); }
      rowsSeen = p.done;
      if (startedRunning === null) { startedRunning = p.status === "running"; }
      if (p.status === "running") { return false; }
      // The run just ended: reload once so the results table shows every answer.
      if (startedRunning) { window.location.reload(); }
      return true;
    }
  });

  var rows = [];
  var current = -1;
  function collectRows() {
    rows = Array.prototype.slice.call(document.querySelectorAll("#results-table tbody tr[data-href]"));
    if (current >= rows.length) { current = rows.length - 1; }
    if (current >= 0) { rows[current].classList.add("active-row"); }
  }
  collectRows();
  function focusRow(index) {
    if (!rows.length) { return; }
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach(function (row, i) { row.classList.toggle("active-row", i === current); });
    rows[current].scrollIntoView({ block: "nearest" });
  }

  var CANCEL_QUESTION = window.gettext("Cancel this run? Answers not judged yet stay undone; Resume (u) continues it later.");

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    // A focused button keeps Enter (and its own keys) for itself.
    if (window.RealMath.isTyping(target) || (target && target.tagName === "BUTTON")) { return; }
    var button = null;
    if (event.key === "c") { button = document.getElementById("cancel-button"); }
    if (event.key === "u") { button = document.getElementById("resume-button"); }
    if (button) {
      event.preventDefault();
      // A stray `c` must not stop a run: ask first (Resume continues a cancelled run).
      var sure = button.id !== "cancel-button" ||
        window.confirm(CANCEL_QUESTION);
      if (!button.disabled && sure) { button.form.requestSubmit(); }
      return;
    }
    if (event.key === "j") { event.preventDefault(); focusRow(current + 1); }
    if (event.key === "k") { event.preventDefault(); focusRow(current - 1); }
    if (event.key === "Enter" && current >= 0 && rows[current].getAttribute("data-href")) {
      window.location.href = rows[current].getAttribute("data-href");
    }
  });
})();
