/* Answer check page: swap, examples and keyboard shortcuts. */
(function () {
  "use strict";
  var form = document.getElementById("eq-form");
  if (!form) return;
  var pred = form.querySelector("textarea[name=pred]");
  var gold = form.querySelector("textarea[name=gold]");
  function swap() { var t = pred.value; pred.value = gold.value; gold.value = t; }
  document.getElementById("eq-swap").addEventListener("click", swap);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); form.requestSubmit(); }
    else if (event.altKey && (event.key === "s" || event.key === "S")) { event.preventDefault(); swap(); }
    else if (event.altKey && event.key === "1") { event.preventDefault(); pred.focus(); }
    else if (event.altKey && event.key === "2") { event.preventDefault(); gold.focus(); }
  });
  document.querySelectorAll(".eq-example").forEach(function (button) {
    button.addEventListener("click", function () {
      pred.value = button.getAttribute("data-pred");
      gold.value = button.getAttribute("data-gold");
      form.requestSubmit();
    });
  });
})();
