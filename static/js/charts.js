// Time-series charts on the vendored uPlot (static/vendor/uplot, loaded as window.uPlot before
// the page's module): axes and legend in the page's language, resized with their box, and a
// sentence for screen readers, since a canvas says nothing to them.
import { lang, t } from "./i18n.js";
import { h } from "./ui.js";

// Distinguishable for the common colour-vision deficiencies (Okabe-Ito): the stylesheet's
// --chart-N, each with its light and its dark value, so a chart follows the colour scheme.
export const PALETTE = Array.from({ length: 9 }, (_, i) => `var(--chart-${i + 1})`);

const count = new Intl.NumberFormat(lang, { maximumFractionDigits: 1 });
const HEIGHT = 220;

export function formatCount(value) {
  return value === null || value === undefined ? t("value-none") : count.format(value);
}

// Axis labels as short as the range allows: days by date, shorter buckets by time (and date
// when the range spans more than a day). The legend always says both.
function axisFormat(bucket, spanSeconds) {
  if (bucket === "day") return new Intl.DateTimeFormat(lang, { month: "short", day: "numeric" });
  if (spanSeconds > 86400) {
    return new Intl.DateTimeFormat(lang, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  }
  if (bucket === "hour") return new Intl.DateTimeFormat(lang, { hour: "numeric" });
  return new Intl.DateTimeFormat(lang, { hour: "2-digit", minute: "2-digit" });
}
// Counts step in whole numbers: no "0.5 requests" on an axis.
const WHOLE_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9];
const legendTime = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" });

const plots = new WeakMap();
const drawn = new Map(); // box -> what timeChart drew in it, to draw it again in another scheme

// colour("var(--chart-1)") -> "rgb(31, 95, 191)": any CSS colour as it computes in `box` now.
function resolver(box) {
  const probe = document.createElement("span");
  probe.hidden = true;
  box.append(probe);
  const style = getComputedStyle(probe);
  const seen = new Map();
  const colour = (value) => {
    if (!seen.has(value)) {
      probe.style.color = value;
      seen.set(value, style.color);
    }
    return seen.get(value);
  };
  colour.done = () => probe.remove();
  return colour;
}

// The switch in the header sets data-theme; the system's preference can change too.
function redrawAll() {
  for (const [box, args] of drawn) {
    if (box.isConnected) timeChart(box, args);
    else drawn.delete(box);
  }
}
new MutationObserver(redrawAll).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", redrawAll);

// Draw (or redraw) a chart in `box`: times are bucket starts (ISO), each series a label and one
// value per time (null where there is none). `format` words a value (a count by default).
export function timeChart(box, chart) {
  const { label, bucket, times, series, format = formatCount, whole = format === formatCount } = chart;
  plots.get(box)?.destroy();
  box.replaceChildren();
  const xs = times.map((iso) => Date.parse(iso) / 1000);
  const span = xs.length > 1 ? xs[xs.length - 1] - xs[0] : 0;
  const axisTime = axisFormat(bucket, span);
  drawn.set(box, chart);
  // A canvas takes no CSS: each colour is resolved for the scheme in force now (and again when
  // it changes, see redrawAll).
  const colour = resolver(box);
  const axis = { stroke: colour("var(--chart-axis)"), grid: { stroke: colour("var(--chart-grid)") }, ticks: { stroke: colour("var(--chart-tick)") } };
  const options = {
    width: Math.max(200, box.clientWidth),
    height: HEIGHT,
    padding: [8, 20, 0, 0],
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(whole ? 1 : 0.001, max)] } },
    cursor: { points: { size: 7 } },
    legend: { live: true },
    series: [
      { label: t("usage-time"), value: (u, v) => (v === null ? t("value-none") : legendTime.format(new Date(v * 1000))) },
      ...series.map((one, i) => ({
        label: one.label,
        stroke: colour(one.color || PALETTE[i % PALETTE.length]),
        width: 2,
        dash: one.dash,
        spanGaps: false,
        points: { show: xs.length <= 48, fill: colour("var(--surface)") },
        value: (u, v) => format(v),
      })),
    ],
    axes: [
      { ...axis, space: 72, values: (u, splits) => splits.map((v) => axisTime.format(new Date(v * 1000))) },
      { ...axis, size: 64, space: 36, incrs: whole ? WHOLE_STEPS : undefined, values: (u, splits) => splits.map((v) => format(v)) },
    ],
  };
  colour.done();
  const plot = new window.uPlot(options, [xs, ...series.map((one) => one.values)], box);
  plots.set(box, plot);
  box.setAttribute("role", "img");
  box.setAttribute("aria-label", describe(label, series, format));
  if (!box.dataset.observed) {
    box.dataset.observed = "1";
    new ResizeObserver(() => {
      const current = plots.get(box);
      const width = Math.max(200, box.clientWidth);
      if (current && Math.abs(current.width - width) > 1) current.setSize({ width, height: HEIGHT });
    }).observe(box);
  }
  return plot;
}

// "Requests: alice up to 12, bob up to 3": the chart's gist in words.
function describe(label, series, format) {
  const parts = series
    .map((one) => {
      const values = one.values.filter((v) => v !== null && v !== undefined);
      return values.length ? t("usage-chart-series-peak", { series: one.label, peak: format(Math.max(...values)) }) : null;
    })
    .filter(Boolean);
  return parts.length ? `${label}: ${parts.join(", ")}` : `${label}: ${t("usage-empty")}`;
}

// The chart's box inside a card with its heading.
export function chartCard(id, title) {
  return h(
    "figure",
    { class: "card chart-card", "aria-labelledby": `${id}-title` },
    h("h2", { id: `${id}-title` }, title),
    h("div", { class: "chart-box", id }),
  );
}
