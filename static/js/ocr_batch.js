/* Batch page: poll the OCR progress of the batch and reload once every page is done. */
(function () {
  "use strict";
  var panel = document.getElementById("batch-progress");
  if (!panel) return;
  var bar = panel.querySelector(".progress > span");
  var meter = panel.querySelector(".progress");
  var text = document.getElementById("progress-text");
  var url = panel.getAttribute("data-url");
  var startedIncomplete = meter.getAttribute("aria-valuenow") !== "100";

  function show(p) {
    window.RealMath.setBar(bar, p.percent);
    meter.setAttribute("aria-valuenow", String(p.percent));
    text.textContent = interpolate(gettext("OCR %s / %s pages"), [p.finished, p.total]) +
      (p.running ? " · " + interpolate(gettext("%s running"), [p.running]) : "") +
      (p.failed ? " · " + interpolate(gettext("%s failed"), [p.failed]) : "") +
      (p.eta_text ? " · " + p.eta_text : "");
  }

  if (startedIncomplete) {
    window.RealMath.poll(url, {
      first: 800,
      every: 1500,
      onData: function (p) {
        show(p);
        if (p.complete) window.location.reload();
        return p.complete;
      }
    });
  }
})();
