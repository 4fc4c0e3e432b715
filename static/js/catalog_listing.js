// Listing budget chart: characters per listed skill, full line versus what the agent shows.
(function () {
  "use strict";
  var node = document.getElementById("listing-data");
  var canvas = document.getElementById("listing-chart");
  if (!node || !canvas || typeof Chart === "undefined") { return; }
  var data = JSON.parse(node.textContent);
  var colours = { "full": "#12b76a", "truncated": "#f79009", "name-only": "#f04438", "dropped": "#98a2b3" };
  new Chart(canvas, {
    type: "bar",
    data: {
      labels: data.labels,
      datasets: [
        { label: "Shown (characters)", data: data.shown,
          backgroundColor: data.states.map(function (s) { return colours[s] || "#667085"; }) },
        { label: "Full line (characters)", data: data.full, backgroundColor: "rgba(102,112,133,0.25)" }
      ]
    },
    options: {
      responsive: true, maintainAspectRatio: false, animation: false,
      plugins: {
        title: { display: true, text: data.used + " of " + data.budget + " characters used" },
        legend: { position: "bottom" }
      },
      scales: { x: { stacked: false, ticks: { autoSkip: true, maxRotation: 60 } }, y: { beginAtZero: true } }
    }
  });
})();
