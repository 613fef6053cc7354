/* Declarative form behaviours, so templates need no inline script or event handler (CSP):
 *   <select data-autosubmit>                 submits its form when changed;
 *     data-autosubmit-clear="run"            first empties the form's field named "run";
 *   <button data-set-field="then" data-set-value="stay">  sets #then before its form submits;
 *   <form data-ctrl-enter>                   Ctrl/Cmd+Enter submits it;
 *   <form data-submit-key="n">               the key n (outside text fields) submits it.
 */
(function () {
  "use strict";

  document.addEventListener("change", function (event) {
    var el = event.target;
    if (!el.matches || !el.matches("[data-autosubmit]") || !el.form) return;
    var clear = el.getAttribute("data-autosubmit-clear");
    if (clear && el.form.elements[clear]) el.form.elements[clear].value = "";
    el.form.submit();
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-set-field]") : null;
    if (!button) return;
    var field = document.getElementById(button.getAttribute("data-set-field"));
    if (field) field.value = button.getAttribute("data-set-value");
  });

  document.addEventListener("keydown", function (event) {
    var form;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      form = document.querySelector("form[data-ctrl-enter]");
    } else if (!event.ctrlKey && !event.metaKey && !event.altKey && !window.RealMath.isTyping(event.target)) {
      var forms = document.querySelectorAll("form[data-submit-key]");
      for (var i = 0; i < forms.length && !form; i++) {
        if (forms[i].getAttribute("data-submit-key") === event.key) form = forms[i];
      }
    }
    if (!form) return;
    event.preventDefault();
    form.requestSubmit();
  });
})();
