/* Disagreement queue: live progress of running LLM pre-label runs (polls the API). */
(function () {
  "use strict";

  function poll(row) {
    var id = row.getAttribute("data-run");
    fetch("/api/review/prelabel-runs/" + id + "/", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (run) {
        if (!run) return;
        row.querySelector(".run-status").textContent = run.status;
        row.querySelector(".run-done").textContent = run.done + " / " + run.n_items;
        row.querySelector(".progress > span").style.width = Math.round(100 * run.fraction) + "%";
        row.querySelector(".run-ok").textContent = run.ok;
        row.querySelector(".run-invalid").textContent = run.invalid;
        row.querySelector(".run-error").textContent = run.error;
        if (run.status === "running") {
          setTimeout(function () { poll(row); }, 2000);
        } else {
          row.setAttribute("data-status", run.status);
          var note = document.getElementById("prelabel-finished");
          if (note) note.hidden = false;
        }
      })
      .catch(function () { setTimeout(function () { poll(row); }, 5000); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("#prelabel-runs tr[data-status=running]").forEach(function (row) {
      setTimeout(function () { poll(row); }, 1500);
    });
  });
})();
