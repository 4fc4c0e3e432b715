/* Draws the health charts from <script type="application/json"> data; Chart.js is served locally. */
(function () {
  "use strict";
  var palette = ["#1d4ed8", "#067647", "#b54708", "#b42318", "#6941c6", "#0e7090"];

  function draw(canvas) {
    var source = document.getElementById(canvas.dataset.source);
    if (!source || typeof Chart === "undefined") { return; }
    var data = JSON.parse(source.textContent);
    var series = JSON.parse(canvas.dataset.series);
    var datasets = series.map(function (s, i) {
      return {
        label: s.label,
        data: data[s.key] || [],
        borderColor: palette[i % palette.length],
        backgroundColor: palette[i % palette.length] + (canvas.dataset.kind === "bar" ? "cc" : "33"),
        fill: canvas.dataset.stacked === "true",
        tension: 0.25,
        pointRadius: 2,
        yAxisID: s.axis || "y"
      };
    });
    var scales = {
      x: { stacked: canvas.dataset.stacked === "true", ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 10 } },
      y: { stacked: canvas.dataset.stacked === "true", beginAtZero: true }
    };
    if (series.some(function (s) { return s.axis === "y2"; })) {
      scales.y2 = { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } };
    }
    new Chart(canvas, {
      type: canvas.dataset.kind || "line",
      data: { labels: data.labels, datasets: datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: "index", intersect: false },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
        scales: scales
      }
    });
    canvas.dataset.drawn = "true";
  }

  document.querySelectorAll("canvas[data-source]").forEach(draw);
})();
