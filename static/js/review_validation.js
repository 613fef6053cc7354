/* Step-judge validation: 1-9 pick a judge, R / W mark its verdict right / wrong,
   Ctrl+Enter save and next, Ctrl+S save, N / P next / previous response. */
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("validation-form");
    if (!form) return;
    var rows = Array.prototype.slice.call(form.querySelectorAll(".judge-row[data-result]"));
    var current = 0;

    function select(index) {
      if (!rows.length) return;
      current = Math.max(0, Math.min(rows.length - 1, index));
      rows.forEach(function (row, i) { row.classList.toggle("current", i === current); });
      rows[current].scrollIntoView({ block: "nearest" });
    }

    function markCurrent(value) {
      var row = rows[current];
      var radio = row && row.querySelector("input[type=radio][value=" + value + "]");
      if (radio) {
        radio.checked = true;
        if (current < rows.length - 1) select(current + 1);
      }
    }

    function save(then) {
      document.getElementById("then").value = then;
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    }

    select(0);
    document.addEventListener("keydown", function (event) {
      var key = event.key;
      if ((event.ctrlKey || event.metaKey) && key === "Enter") { event.preventDefault(); save("next"); return; }
      if ((event.ctrlKey || event.metaKey) && (key === "s" || key === "S")) { event.preventDefault(); save("stay"); return; }
      if (window.RealMath.isTyping(event.target)) { if (key === "Escape") event.target.blur(); return; }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (/^[1-9]$/.test(key)) {
        var wanted = form.querySelector(".judge-row[data-row='" + key + "']");
        var index = rows.indexOf(wanted);
        if (index >= 0) select(index);
      } else if (key === "r" || key === "R") {
        markCurrent("right");
      } else if (key === "w" || key === "W") {
        markCurrent("wrong");
      } else if (key === "n" || key === "N") {
        var next = document.getElementById("next-case"); if (next) window.location.href = next.href;
      } else if (key === "p" || key === "P") {
        var prev = document.getElementById("prev-case"); if (prev) window.location.href = prev.href;
      }
    });
  });
})();
