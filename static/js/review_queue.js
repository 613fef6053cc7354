/* Disagreement queue: live progress of running LLM pre-label runs (polls the API at each row's data-url). */
(function () {
  "use strict";

  function show(row, run) {
    row.querySelector(".run-status").textContent = window.RealMath.statusLabel(run.status);
    row.querySelector(".run-done").textContent = run.done + " / " + run.n_items;
    window.RealMath.setBar(row.querySelector(".progress > span"), Math.round(100 * run.fraction));
    row.querySelector(".run-ok").textContent = run.ok;
    row.querySelector(".run-invalid").textContent = run.invalid;
    row.querySelector(".run-error").textContent = run.error;
    if (run.status === "running") return false;
    row.setAttribute("data-status", run.status);
    var note = document.getElementById("prelabel-finished");
    if (note) note.hidden = false;
    return true;
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("#prelabel-runs tr[data-status=running]").forEach(function (row) {
      window.RealMath.poll(row.getAttribute("data-url"), {
        first: 1500,
        every: 2000,
        onData: function (run) { return show(row, run); }
      });
    });
  });
})();
