/* Single-key shortcuts of the judge pages: data-keys on this script maps keys to URLs. */
(function () {
  "use strict";
  var script = document.currentScript;
  var keys = {};
  try { keys = JSON.parse(script.getAttribute("data-keys") || "{}"); } catch (e) { keys = {}; }
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (window.RealMath.isTyping(target)) { return; }
    if (Object.prototype.hasOwnProperty.call(keys, event.key)) {
      event.preventDefault();
      window.location.href = keys[event.key];
    }
  });
})();
