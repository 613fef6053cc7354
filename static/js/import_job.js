/* Import job page: poll the job's progress until it is done or failed. */
(function () {
  "use strict";
  var panel = document.getElementById("import-job");
  if (!panel) return;
  var url = panel.getAttribute("data-progress-url");

  function megabytes(bytes) { return (bytes / 1048576).toFixed(1) + " MB"; }

  function show(state) {
    window.RealMath.setBar(document.getElementById("import-bar"), state.percent);
    document.getElementById("import-count").textContent = megabytes(state.done) + " / " + megabytes(state.total);
    document.getElementById("import-status").textContent = window.RealMath.statusLabel(state.status);
    var notice = document.getElementById("import-notice");  // restarted after its worker stopped (server's words)
    if (notice) { notice.hidden = !state.notice; notice.textContent = state.notice || ""; }
    var error = document.getElementById("import-error");
    error.hidden = !state.error;
    error.textContent = state.error || "";
    var link = document.getElementById("import-report");
    if (state.report) { link.href = state.report; link.hidden = false; }
    if (state.status === "done" && state.report) window.location.assign(state.report);  // straight to the report
    return state.status === "done" || state.status === "failed";
  }

  window.RealMath.poll(url, { every: 1000, onData: show });
})();
