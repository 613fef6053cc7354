/* Judge-run Start page: the cost estimate of the chosen setting and selection, asked from
   the estimate JSON (calls, tokens, cost live and batch, the assumptions in words) whenever the
   setting changes, before Start is pressed. */
(function () {
  "use strict";
  var box = document.getElementById("run-estimate");
  var form = document.getElementById("run-form");
  var select = form ? form.querySelector("select[name=config]") : null;
  if (!box || !select) { return; }
  var url = box.getAttribute("data-url");
  var statusLine = document.getElementById("estimate-status");
  var figures = document.getElementById("estimate-figures");
  var unpriced = document.getElementById("estimate-unpriced");
  var list = document.getElementById("estimate-assumptions");
  var asked = 0;

  function set(id, value) { document.getElementById(id).textContent = value; }
  function number(value) { return Number(value).toLocaleString(document.documentElement.lang || undefined); }

  function clear(message) {
    statusLine.textContent = message;
    figures.hidden = true;
    unpriced.hidden = true;
    list.textContent = "";
    box.removeAttribute("data-ready");
  }

  function show(e) {
    statusLine.textContent = interpolate(gettext("Estimated before the run for %s answers; nothing is sent to estimate."), [number(e.n_items)]);
    set("e-calls", number(e.calls) + (e.calls_upper_bound ? " " + gettext("(at most)") : ""));
    set("e-cached", number(e.cached));
    set("e-tin", number(e.input_tokens));
    set("e-tout", number(e.output_tokens));
    set("e-live", e.priced ? e.cost_live : "—");
    set("e-batch", e.priced ? e.cost_batch : "—");
    figures.hidden = false;
    unpriced.hidden = e.priced || !e.calls;
    list.textContent = "";
    (e.assumptions || []).forEach(function (line) {
      var item = document.createElement("li");
      item.textContent = line;
      list.appendChild(item);
    });
    box.setAttribute("data-ready", "1");
  }

  function ask() {
    if (!select.value) { clear(gettext("Choose a judge setting to see what the run would cost.")); return; }
    var query = new URLSearchParams();
    form.querySelectorAll("input[type=hidden]").forEach(function (input) {
      if (input.name !== "csrfmiddlewaretoken") { query.append(input.name, input.value); }
    });
    query.set("config", select.value);
    var mine = ++asked;
    clear(gettext("Estimating…"));
    window.fetch(url + "?" + query.toString(), { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) { return response.json().then(function (data) { return { ok: response.ok, data: data }; }); })
      .then(function (answer) {
        if (mine !== asked) { return; }
        if (!answer.ok) { clear(answer.data.error || gettext("The estimate could not be made.")); box.setAttribute("data-ready", "1"); return; }
        show(answer.data);
      })
      .catch(function () { if (mine === asked) { clear(gettext("The estimate could not be made.")); } });
  }

  select.addEventListener("change", ask);
  ask();
}());
