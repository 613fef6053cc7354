/* RealMath Workbench: shared page behaviour. */
(function () {
  "use strict";

  // Render $...$ and $$...$$ in every element marked .math. KaTeX runs with trust off:
  // \href, \includegraphics and friends are refused, and the text stays escaped HTML.
  var KATEX_OPTIONS = {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "\\(", right: "\\)", display: false },
      { left: "$", right: "$", display: false }
    ],
    throwOnError: false,
    trust: false,
    strict: "ignore",
    maxExpand: 1000,
    maxSize: 50
  };

  function renderMath(root) {
    if (typeof window.renderMathInElement !== "function") return;
    var nodes = (root || document).querySelectorAll(".math");
    for (var i = 0; i < nodes.length; i++) {
      window.renderMathInElement(nodes[i], KATEX_OPTIONS);
    }
  }

  window.RealMath = window.RealMath || {};
  window.RealMath.renderMath = renderMath;
  window.RealMath.katexOptions = KATEX_OPTIONS;
  window.RealMath.csrfToken = function () {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  };

  document.addEventListener("DOMContentLoaded", function () { renderMath(document); });
})();
