/* Import job page: poll the job's progress until it is done or failed. */
(function () {
  "use strict";
  var panel = document.getElementById("import-job");
  if (!panel) return;
  var url = panel.getAttribute("data-progress-url");

  function megabytes(bytes) { return (bytes / 1048576).toFixed(1) + " MB"; }

  function show(state) {
    document.getElementById("import-bar").style.width = state.percent + "%";
    document.getElementById("import-count").textContent = megabytes(state.done) + " / " + megabytes(state.total);
    document.getElementById("import-status").textContent = state.status.charAt(0).toUpperCase() + state.status.slice(1);
    var error = document.getElementById("import-error");
    error.hidden = !state.error;
    error.textContent = state.error || "";
    var link = document.getElementById("import-report");
    if (state.report) { link.href = state.report; link.hidden = false; }
    if (state.status === "done" && state.report) window.location.assign(state.report);  // straight to the report
    return state.status === "done" || state.status === "failed";
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (state) { if (!show(state)) window.setTimeout(poll, 1000); })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  poll();
})();
