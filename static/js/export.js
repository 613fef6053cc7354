/* Export job page: poll the job's progress until it is done or failed. */
(function () {
  "use strict";
  var panel = document.getElementById("export-job");
  if (!panel) return;
  var url = panel.getAttribute("data-progress-url");

  function show(state) {
    window.RealMath.setBar(document.getElementById("export-bar"), state.percent);
    document.getElementById("export-count").textContent = state.done + " / " + state.total;
    document.getElementById("export-status").textContent = window.RealMath.statusLabel(state.status);
    var notice = document.getElementById("export-notice");  // restarted after its worker stopped (server's words)
    if (notice) { notice.hidden = !state.notice; notice.textContent = state.notice || ""; }
    var error = document.getElementById("export-error");
    error.hidden = !state.error;
    error.textContent = state.error || "";
    var link = document.getElementById("export-download");
    if (state.download) { link.href = state.download; link.hidden = false; }
    var restart = document.getElementById("export-restart");
    if (restart) restart.hidden = state.status !== "failed";
    return state.status === "done" || state.status === "failed";
  }

  window.RealMath.poll(url, { every: 1000, onData: show });
})();
