/* OCR quality page: a bar chart of raw and math-normalised CER (%) by engine, drawn with the vendored Chart.js. */
(function () {
  "use strict";
  var canvas = document.getElementById("cer-chart");
  if (!canvas || typeof window.Chart !== "function") return;
  var data = JSON.parse(document.getElementById("cer-data").textContent);
  new window.Chart(canvas, {
    type: "bar",
    data: {
      labels: data.labels,
      datasets: [
        { label: gettext("raw CER (%)"), data: data.cer, backgroundColor: "#2f5fd0", maxBarThickness: 70 },
        { label: gettext("math-normalised CER (%)"), data: data.cer_math, backgroundColor: "#8fb0f5", maxBarThickness: 70 }
      ]
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: { y: { beginAtZero: true, title: { display: true, text: gettext("character error rate, %") } } },
      plugins: { legend: { display: true } }
    }
  });
})();
