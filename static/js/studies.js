/* Studies pages: live progress of probe runs (list and run page) through RealMath.poll; a run
   that ends while the page is open reloads once so the rates and items show. Math in the item
   page's answers is rendered by app.js (RealMath.renderMath) on load. */
(function () {
  "use strict";
  var RM = window.RealMath;
  if (!RM || !RM.poll) { return; }

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
      set("p-status", p.stalled ? gettext("Running · no progress for a while: is a worker running?") : window.RealMath.statusLabel(p.status));
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
