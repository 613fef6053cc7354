/* Adjudication page: pick a label with 1-9, g focuses the gold score, Ctrl+Enter saves. */
(function () {
  "use strict";
  var form = document.getElementById("adjudicate-form");
  if (!form) return;
  function sync() {
    form.querySelectorAll(".label-card").forEach(function (card) {
      card.classList.toggle("chosen", card.querySelector("input[type=radio]").checked);
    });
  }
  form.addEventListener("change", sync);
  // Points per sub-question typed by the adjudicator: their sum is the gold score.
  var subInputs = form.querySelectorAll(".sub-score-input");
  function sumSubScores() {
    var total = 0, any = false;
    subInputs.forEach(function (input) {
      if (input.value !== "" && !isNaN(Number(input.value))) { total += Number(input.value); any = true; }
    });
    if (any) document.getElementById("gold_score").value = String(Math.round(total * 100) / 100);
  }
  subInputs.forEach(function (input) { input.addEventListener("input", sumSubScores); });
  document.addEventListener("keydown", function (e) {
    var typing = window.RealMath.isTyping(e.target);
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); form.requestSubmit(); return; }
    if (e.key === "Escape" && typing) { e.target.blur(); return; }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (/^[1-9]$/.test(e.key)) {
      var radios = form.querySelectorAll("input[name=chosen]");
      var radio = radios[Number(e.key) - 1];
      if (radio) { radio.checked = true; sync(); e.preventDefault(); }
    } else if (e.key === "g") { e.preventDefault(); document.getElementById("gold_score").focus(); }
  });
  sync();
})();
