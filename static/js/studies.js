/* Studies pages: live progress of probe runs (list and run page) through RealMath.poll; a run
   that ends while the page is open reloads once so the rates and items show. Math in the item
   page's answers is rendered by app.js (RealMath.renderMath) on load. */
(function () {
  "use strict";
  var RM = window.RealMath;
  if (!RM || !RM.poll) { return; }

  // The probe form: how many judge calls the ticked probes would make, before starting. Only
  // the answer to the newest request is shown (an older one arriving late would show a stale
  // figure).
  var probeForm = document.getElementById("probe-form");
  var callsNote = document.getElementById("probe-calls");
  var gettext = window.gettext, interpolate = window.interpolate;
  var asked = 0;
  function estimate() {
    var query = new URLSearchParams();
    Array.prototype.forEach.call(probeForm.elements, function (field) {
      if (!field.name || field.name === "csrfmiddlewaretoken") { return; }
      if (field.type === "checkbox" && !field.checked) { return; }
      if (field.value !== "") { query.append(field.name, field.value); }
    });
    var mine = ++asked;
    fetch(callsNote.getAttribute("data-url") + "?" + query.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (e) {
        if (mine !== asked) { return; }  // a newer selection was asked for meanwhile
        var text = gettext("No probe ticked: tick the probes to run (each costs judge calls).");
        if (e.probes) {
          text = e.samples > 1
            ? interpolate(gettext("Starting makes up to %(calls)s judge call(s): %(items)s derived answer(s) from %(answers)s answer(s) × %(probes)s probe(s) × %(samples)s samples."), e, true)
            : interpolate(gettext("Starting makes up to %(calls)s judge call(s): %(items)s derived answer(s) from %(answers)s answer(s) × %(probes)s probe(s)."), e, true);
        }
        callsNote.textContent = text;
        callsNote.setAttribute("data-calls", e.calls);
      })
      .catch(function () { /* the note keeps its last figure */ });
  }
  if (probeForm && callsNote) {
    probeForm.addEventListener("change", estimate);
    // A typed limit counts as soon as it is typed, not when the field loses focus ("change").
    var typing = null;
    probeForm.addEventListener("input", function (event) {
      if (event.target.type === "checkbox" || event.target.tagName === "SELECT") { return; }
      clearTimeout(typing);
      typing = setTimeout(estimate, 250);
    });
    estimate();
  }

  function follow(url, onData) {
    var wasRunning = null;
    RM.poll(url, {
      every: 1000,
      maxDelay: 10000,
      onData: function (p) {
        onData(p);
        if (wasRunning === null) { wasRunning = p.status === "running"; }
        if (p.status === "running") { return false; }
        if (wasRunning) { window.location.reload(); }
        return true;
      }
    });
  }

  var panel = document.getElementById("probe-progress");
  if (panel && panel.getAttribute("data-status") === "running") {
    follow(panel.getAttribute("data-url"), function (p) {
      var bar = document.getElementById("p-bar");
      if (bar) { RM.setBar(bar, p.percent); }
      var set = function (id, value) { var el = document.getElementById(id); if (el) { el.textContent = value; } };
      set("p-status", p.stalled ? gettext("Running · no progress for a while: if its worker stopped, the run is taken over automatically once its claims' lease has passed") : window.RealMath.statusLabel(p.status));
      set("p-count", p.done + " / " + p.total);
      set("p-ok", p.ok); set("p-invalid", p.invalid); set("p-error", p.error);
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("#probe-runs tr[data-status=running]"), function (row) {
    follow(row.getAttribute("data-url"), function (p) {
      var bar = row.querySelector(".progress span");
      if (bar) { RM.setBar(bar, p.percent); }
      var done = row.querySelector(".run-done");
      if (done) { done.textContent = p.done + " / " + p.total; }
      var status = row.querySelector(".run-status");
      if (status) { status.textContent = window.RealMath.statusLabel(p.status); }
    });
  });
})();
