/* Judge setting form: explain the chosen kind, fill in its default prompt, Ctrl+S saves. */
(function () {
  "use strict";
  var form = document.getElementById("config-form");
  if (!form) { return; }
  var defaults = JSON.parse(document.getElementById("kind-defaults").textContent);
  var helps = JSON.parse(document.getElementById("kind-help-texts").textContent);
  var kind = form.querySelector("[name=kind]");
  var help = document.getElementById("kind-help");
  function explain() { help.textContent = helps[kind.value] || ""; }
  kind.addEventListener("change", explain);
  explain();
  document.getElementById("use-default").addEventListener("click", function () {
    var strategy = form.querySelector("[name=strategy]");
    var d = (kind.value === "rubric" && strategy && defaults["rubric:" + strategy.value]) ||
      defaults[kind.value] || { system: "", template: "" };
    form.querySelector("[name=system_prompt]").value = d.system;
    form.querySelector("[name=prompt_template]").value = d.template;
  });
  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "s") { event.preventDefault(); form.requestSubmit(); }
  });
})();
