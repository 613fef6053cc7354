/* Disagreement review screen: keyboard shortcuts for classifying a case.
   A-E choose the category, L takes the LLM proposal, / focuses the analysis, Esc leaves it,
   Ctrl+Enter saves and moves to the next unclassified case, Ctrl+S saves and stays,
   N / P / U go to the next / previous / next unclassified case. */
(function () {
  "use strict";

  function choose(form, code) {
    var radio = form.querySelector("input[name=category][value=" + code + "]");
    if (!radio) return;
    radio.checked = true;
    mark(form);
  }

  function mark(form) {
    form.querySelectorAll(".choice-list li").forEach(function (li) {
      var radio = li.querySelector("input[type=radio]");
      li.classList.toggle("selected", !!(radio && radio.checked));
    });
  }

  function submit(form, then) {
    form.querySelector("#then").value = then;
    if (!form.querySelector("input[name=category]:checked")) {
      alert(gettext("Choose a category first (keys A to E)."));
      return;
    }
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
  }

  function go(id) {
    var link = document.getElementById(id);
    if (link) window.location.href = link.href;
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("classify-form");
    if (!form) return;
    var analysis = document.getElementById("analysis");
    var useProposal = document.getElementById("use-proposal");
    form.addEventListener("change", function () { mark(form); });
    if (useProposal) {
      useProposal.addEventListener("click", function () {
        choose(form, useProposal.getAttribute("data-category"));
        var text = document.getElementById("llm-analysis");
        if (text && analysis && !analysis.value.trim()) analysis.value = text.textContent.trim();
      });
    }

    document.addEventListener("keydown", function (event) {
      var key = event.key;
      if ((event.ctrlKey || event.metaKey) && key === "Enter") {
        event.preventDefault();
        submit(form, "next");
        return;
      }
      if ((event.ctrlKey || event.metaKey) && (key === "s" || key === "S")) {
        event.preventDefault();
        submit(form, "stay");
        return;
      }
      if (window.RealMath.isTyping(event.target)) {
        if (key === "Escape") event.target.blur();
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var upper = key.length === 1 ? key.toUpperCase() : key;
      if ("ABCDE".indexOf(upper) >= 0 && upper.length === 1) {
        event.preventDefault();
        choose(form, upper);
      } else if (upper === "L" && useProposal) {
        event.preventDefault();
        useProposal.click();
      } else if (key === "/") {
        event.preventDefault();
        analysis.focus();
      } else if (upper === "N") {
        go("next-case");
      } else if (upper === "P") {
        go("prev-case");
      } else if (upper === "U") {
        go("next-todo");
      }
    });
    // The keys work from here on; a test (or a script) waits for this before pressing them.
    form.setAttribute("data-keys", "ready");
  });
})();
