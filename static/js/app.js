/* RealMath Workbench: shared page behaviour. */
(function () {
  "use strict";

  // The JavaScript catalog (/i18n/js/, loaded before this file) defines gettext, ngettext and
  // interpolate in the page's language; without it the English text is shown as it is.
  if (typeof window.gettext !== "function") {
    window.gettext = function (text) { return text; };
    window.ngettext = function (singular, plural, n) { return n === 1 ? singular : plural; };
    window.interpolate = function (format, args, named) {
      if (named) {
        return format.replace(/%\((\w+)\)s/g, function (_, key) { return String(args[key]); });
      }
      var i = 0;
      return format.replace(/%s/g, function () { return String(args[i++]); });
    };
  }
  var gettext = window.gettext, interpolate = window.interpolate;

  // Names of the states of runs, jobs and pages as the JSON progress views send them (codes).
  var STATUS_LABELS = {
    queued: gettext("Queued"), running: gettext("Running"), done: gettext("Done"), failed: gettext("Failed"),
    cancelled: gettext("Cancelled"), pending: gettext("Pending"), ok: gettext("OK"), invalid: gettext("Invalid output"),
    error: gettext("Call failed"),
    // a provider's batch (the Batch API)
    "new": gettext("Not uploaded yet"), validating: gettext("Validating"), in_progress: gettext("In progress"),
    finalizing: gettext("Finalizing"), completed: gettext("Completed"), expired: gettext("Expired"),
    cancelling: gettext("Cancelling")
  };
  function statusLabel(code) { return Object.prototype.hasOwnProperty.call(STATUS_LABELS, code) ? STATUS_LABELS[code] : code; }

  // Render $...$ and $$...$$ in every element marked .math. KaTeX runs with trust off:
  // \href, \includegraphics and friends are refused, and the text stays escaped HTML.
  // Formulas nested deeper than MATH_MAX_DEPTH, longer than MATH_MAX_LENGTH, or defining
  // macros (which can nest without limit) are shown as their source: Chromium's tab dies
  // laying out a few hundred nested KaTeX boxes, and such text may come from anyone.
  var MATH_MAX_DEPTH = 32;
  var MATH_MAX_LENGTH = 20000;
  var MACRO_DEFINITIONS = /\\(?:def|gdef|edef|xdef|let|futurelet|global|newcommand|renewcommand|providecommand)(?![a-zA-Z])/;

  // Nesting depth of TeX source: braces, \\left..\\right, \\begin..\\end, groups and \\sqrt[..]
  // each add a level; a braced superscript or subscript adds two (the script is a box too).
  // A closer only closes an opener of its own kind, so stray closers cannot lower the count;
  // comments and \\verb are skipped as KaTeX skips them.
  var OPENERS = { "{": "}", "\\bgroup": "}", "\\left": "\\right", "\\begin": "\\end", "\\begingroup": "\\endgroup" };
  var CLOSERS = { "}": "}", "\\egroup": "}", "\\right": "\\right", "\\end": "\\end", "\\endgroup": "\\endgroup", "]": "]" };

  function mathDepth(tex) {
    var depth = 0, deepest = 0, stack = [], script = false, afterSqrt = false;
    var i = 0, n = tex.length, c, token, weight, match;
    while (i < n) {
      c = tex.charAt(i);
      if (c === " " || c === "\n" || c === "\t" || c === "\r") { i++; continue; }
      if (c === "%") {  // a comment runs to the end of the line
        match = tex.indexOf("\n", i);
        i = match < 0 ? n : match + 1;
        continue;
      }
      if (c === "\\") {
        match = /^\\([a-zA-Z]+|[\s\S]?)/.exec(tex.slice(i, i + 64));
        token = "\\" + match[1];
        i += token.length;
        if (token === "\\verb") {  // \verb|...| or \verb*|...|: its text is not TeX
          if (tex.charAt(i) === "*") i++;
          match = tex.indexOf(tex.charAt(i), i + 1);
          i = match < 0 ? n : match + 1;
        }
      } else {
        token = c;
        i++;
      }
      if (token === "[" && afterSqrt) {
        stack.push({ close: "]", weight: 1 }); depth += 1;
      } else if (Object.prototype.hasOwnProperty.call(OPENERS, token)) {
        weight = script && token === "{" ? 2 : 1;
        stack.push({ close: OPENERS[token], weight: weight }); depth += weight;
      } else if (Object.prototype.hasOwnProperty.call(CLOSERS, token)) {
        if (stack.length && stack[stack.length - 1].close === CLOSERS[token]) depth -= stack.pop().weight;
      }
      deepest = Math.max(deepest, depth + (script && token !== "{" ? 1 : 0));
      afterSqrt = token === "\\sqrt";
      script = token === "^" || token === "_";
    }
    return deepest;
  }

  function boundMath(tex) {
    var depth = mathDepth(tex);
    var reason = null;
    if (tex.length > MATH_MAX_LENGTH) reason = interpolate(gettext("%s characters (limit %s)"), [tex.length, MATH_MAX_LENGTH]);
    else if (depth > MATH_MAX_DEPTH) reason = interpolate(gettext("nested %s deep (limit %s)"), [depth, MATH_MAX_DEPTH]);
    else if (MACRO_DEFINITIONS.test(tex)) reason = gettext("it defines macros");
    if (reason) {
      // auto-render shows the escaped source, as text, for a formula that fails to parse.
      var error = new window.katex.ParseError(interpolate(gettext("not rendered: %s"), [reason]));
      error.realmathBound = true;
      throw error;
    }
    return tex;
  }

  var KATEX_OPTIONS = {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "\\(", right: "\\)", display: false },
      { left: "$", right: "$", display: false }
    ],
    // Under the CSP (no 'unsafe-inline' for styles) KaTeX's DOM output is fine: katex.render
    // builds elements and sets their styles through CSSOM. Three spots of KaTeX write a style
    // *attribute*, which the CSP refuses: the red error box (throwOnError: false), and the
    // MathML of \pmb and \fcolorbox. So a formula that does not parse throws, and auto-render
    // shows its source as text (as for bounded formulas below); the two commands are macros
    // (a string macro takes as many arguments as it names from #1 on, so #1 must appear).
    throwOnError: true,
    macros: { "\\pmb": "\\boldsymbol{#1}", "\\fcolorbox": "\\textcolor{#1}{\\fbox{\\colorbox{#2}{#3}}}" },
    trust: false,
    strict: "ignore",
    maxExpand: 1000,
    maxSize: 50,
    preProcess: boundMath,
    errorCallback: function (message, error) {
      // Student text is often not valid TeX: it is shown as written, with a note for whoever looks.
      if (error && (error.realmathBound || error instanceof window.katex.ParseError)) {
        console.warn("Math shown as source, " + error.message);
      } else {
        console.error(message, error);
      }
    }
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
  window.RealMath.mathDepth = mathDepth;

  // Is the user typing into this element? Then single-key shortcuts leave the key alone.
  // Text fields, selects and editable content count; radios, checkboxes and buttons do not,
  // so a shortcut still works after clicking one of them.
  var NOT_TEXT = /^(button|checkbox|color|file|hidden|image|radio|range|reset|submit)$/i;
  function isTyping(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable) return true;
    var tag = target.tagName.toUpperCase();
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    return tag === "INPUT" && !NOT_TEXT.test(target.type || "text");
  }

  // Send JSON with the CSRF token; resolves to { ok, status, data } (data is {} when the answer
  // is not JSON) and rejects only when the network fails. keepalive lets a send outlive the page.
  function sendJson(url, method, body, options) {
    return window.fetch(url, {
      method: method,
      credentials: "same-origin",
      keepalive: !!(options && options.keepalive),
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { ok: response.ok, status: response.status, data: data };
      });
    });
  }

  // Poll a JSON progress URL until onData(data) returns true (done). Every `every` ms while the
  // answers come; after a failure (network, non-JSON, 5xx, 429) the wait doubles, up to
  // `maxDelay`, and drops back to `every` with the next good answer. Another 4xx (the job is
  // gone, the session ended) stops polling and calls onGiveUp(status). Returns { stop }.
  function poll(url, options) {
    var every = options.every || 1000;
    var maxDelay = options.maxDelay || 30000;
    var failures = 0;
    var timer = null;
    var stopped = false;

    function schedule(delay) { if (!stopped) timer = window.setTimeout(tick, delay); }
    function fail() {
      failures += 1;
      schedule(Math.min(maxDelay, every * Math.pow(2, failures)));
    }
    function tick() {
      window.fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (response) {
          if (response.ok) return response.json();
          var transient = response.status >= 500 || response.status === 429 || response.status === 408;
          return Promise.reject({ giveUp: !transient, status: response.status });
        })
        .then(function (data) {
          if (stopped) return;
          failures = 0;
          if (options.onData(data)) stopped = true;
          else schedule(every);
        })
        .catch(function (error) {
          if (stopped) return;
          if (error && error.giveUp) {
            stopped = true;
            if (options.onGiveUp) options.onGiveUp(error.status);
          } else {
            fail();
          }
        });
    }

    schedule(options.first || 0);
    return { stop: function () { stopped = true; window.clearTimeout(timer); } };
  }

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  window.RealMath.csrfToken = csrfToken;
  window.RealMath.isTyping = isTyping;
  window.RealMath.sendJson = sendJson;
  window.RealMath.poll = poll;
  window.RealMath.statusLabel = statusLabel;

  // Progress bars (<div class="progress"><span data-percent="40"></span></div>): the width is
  // set here through CSSOM, since the CSP allows no style attribute. Returns the bar.
  function setBar(bar, percent) {
    var value = Math.max(0, Math.min(100, Number(percent) || 0));
    bar.setAttribute("data-percent", String(value));
    bar.style.width = value + "%";
    return bar;
  }

  function setBars(root) {
    (root || document).querySelectorAll(".progress > [data-percent]").forEach(function (bar) {
      setBar(bar, bar.getAttribute("data-percent"));
    });
  }

  window.RealMath.setBar = setBar;

  // Redaction regions drawn over a page image (<span class="redact-box" data-box="x0,y0,x1,y1">,
  // page fractions, inside a positioned frame): placed here through CSSOM, as the bars are.
  function placeRedactions(root) {
    (root || document).querySelectorAll(".redact-box[data-box]").forEach(function (box) {
      var v = box.getAttribute("data-box").split(",").map(Number);
      if (v.length !== 4 || v.some(function (n) { return !isFinite(n); })) { return; }
      box.style.left = (v[0] * 100) + "%";
      box.style.top = (v[1] * 100) + "%";
      box.style.width = ((v[2] - v[0]) * 100) + "%";
      box.style.height = ((v[3] - v[1]) * 100) + "%";
    });
  }

  window.RealMath.placeRedactions = placeRedactions;

  // Wide tables scroll inside their card (.table-wrap): one that is wider than its card is marked
  // "scrolls" (its right edge fades while columns are hidden there: "at-end" once scrolled to
  // them) and can be scrolled with the keyboard (tabindex).
  // A table that changes width later (a progress poll filling its cells) is looked at again.
  var watcher = window.ResizeObserver ? new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { var wrap = entry.target.closest(".table-wrap"); if (wrap) { markWideTable(wrap); } });
  }) : null;
  function markWideTables(root) {
    (root || document).querySelectorAll(".table-wrap").forEach(function (wrap) {
      markWideTable(wrap);
      var table = wrap.querySelector("table");
      if (watcher && table && !wrap.hasAttribute("data-watched")) { wrap.setAttribute("data-watched", ""); watcher.observe(table); watcher.observe(wrap); }
    });
  }
  function markWideTable(wrap) {
    var wide = wrap.scrollWidth > wrap.clientWidth + 1;
    wrap.classList.toggle("scrolls", wide);
    wrap.classList.toggle("at-end", !wide || wrap.scrollLeft + wrap.clientWidth >= wrap.scrollWidth - 1);
    if (wide && !wrap.hasAttribute("tabindex")) { wrap.setAttribute("tabindex", "0"); }
    var lastCell = wrap.querySelector("tr > :last-child");
    wrap.classList.toggle("sticky-end", !!lastCell && getComputedStyle(lastCell).position === "sticky");
  }
  document.addEventListener("scroll", function (event) {
    var wrap = event.target;
    if (wrap && wrap.classList && wrap.classList.contains("table-wrap")) { markWideTable(wrap); }
  }, true);
  var resizing = null;
  window.addEventListener("resize", function () { clearTimeout(resizing); resizing = setTimeout(function () { markWideTables(document); }, 100); });
  window.RealMath.markWideTables = markWideTables;

  // The language menu: links (not submit buttons of a form, which an automation pressing "the
  // form's submit button" would press); a click posts the choice through the menu's hidden form.
  // Without scripts the link opens a page with the one button that switches.
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a.language-link[data-language]") : null;
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    var form = document.getElementById("language-form");
    if (!form) { return; }
    event.preventDefault();
    if (link.classList.contains("current")) { return; }
    form.elements.language.value = link.getAttribute("data-language");
    form.submit();
  });

  document.addEventListener("DOMContentLoaded", function () { setBars(document); placeRedactions(document); renderMath(document); markWideTables(document); });
  // Math and fonts change widths after the first layout: look again once everything is in.
  window.addEventListener("load", function () { markWideTables(document); });
})();
