// Administration → Usage: requests, tokens, queue waits and refusals over time from
// GET /api/v0/admin/usage, grouped by user, group, token, model or class over a chosen range,
// with the same query as a CSV download. The query lives in the address too.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { $, cell, formatMs, priorityName, tOr } from "./widgets.js";
import { chartCard, formatCount, timeChart } from "./charts.js";
import { bucketFor, isoFromLocal, localFromIso, rangeStart } from "./usage-query.js";

const CLASSES = ["high", "medium", "low"];
const SHOWN_GROUPS = 8; // more lines than this are unreadable: the rest are summed as "Other"

const form = $("usage-query");
const pageAlert = $("page-alert");
const exportLink = $("usage-export");
const charts = $("usage-charts");

const CHARTS = [
  ["chart-requests", "usage-chart-requests"],
  ["chart-input", "usage-chart-input"],
  ["chart-output", "usage-chart-output"],
  ["chart-queue-wait", "usage-chart-queue-wait"],
  ["chart-refusals", "usage-chart-refusals"],
];
charts.append(...CHARTS.map(([id, title]) => chartCard(id, t(title))));

function groupLabel(groupBy, row) {
  if (groupBy === "user") return row.username || t("usage-no-user");
  if (groupBy === "group") return row.group ?? t("usage-no-group");
  if (groupBy === "token") return row.token_id === null ? t("activity-browser") : t("usage-token-label", { name: row.token_name, id: row.token_id });
  if (groupBy === "class") return priorityName(row.priority_class);
  return row.model;
}

function groupKey(groupBy, row) {
  if (groupBy === "token") return String(row.token_id);
  return String({ user: row.username, group: row.group, class: row.priority_class, model: row.model }[groupBy]);
}

function customRange() {
  return form.elements.range.value === "custom";
}

function syncCustom() {
  for (const id of ["field-since", "field-until"]) $(id).hidden = !customRange();
}

// The API's query from the form (and the address's query from the same values).
function query() {
  const params = new URLSearchParams();
  params.set("group_by", form.elements.group_by.value);
  params.set("bucket", form.elements.bucket.value);
  if (customRange()) {
    const since = isoFromLocal(form.elements.since.value);
    const until = isoFromLocal(form.elements.until.value);
    if (since) params.set("since", since);
    if (until) params.set("until", until);
  } else {
    const until = new Date();
    params.set("since", rangeStart(form.elements.range.value, until).toISOString());
    params.set("until", until.toISOString());
  }
  return params;
}

function addressQuery() {
  const params = new URLSearchParams();
  for (const name of ["group_by", "range", "bucket"]) params.set(name, form.elements[name].value);
  if (customRange()) {
    for (const name of ["since", "until"]) {
      const iso = isoFromLocal(form.elements[name].value);
      if (iso) params.set(name, iso);
    }
  }
  return params;
}

function restoreFromAddress() {
  const params = new URLSearchParams(window.location.search);
  for (const name of ["group_by", "range", "bucket"]) {
    const value = params.get(name);
    if (value && [...form.elements[name].options].some((o) => o.value === value)) form.elements[name].value = value;
  }
  for (const name of ["since", "until"]) {
    if (params.get(name)) form.elements[name].value = localFromIso(params.get(name));
  }
  syncCustom();
}

// Per group, one value per bucket; groups beyond the busiest few are added up as "Other".
function groupSeries(body, pick) {
  const groupBy = body.group_by;
  const ranked = [...body.results].sort((a, b) => b.requests - a.requests);
  const shown = ranked.slice(0, SHOWN_GROUPS).map((row) => groupKey(groupBy, row));
  const index = new Map(body.buckets.map((start, i) => [start, i]));
  const lines = new Map(ranked.slice(0, SHOWN_GROUPS).map((row) => [groupKey(groupBy, row), { label: groupLabel(groupBy, row), values: body.buckets.map(() => 0) }]));
  const other = { label: t("usage-other"), values: body.buckets.map(() => 0) };
  for (const row of body.series) {
    const key = groupKey(groupBy, row);
    const line = shown.includes(key) ? lines.get(key) : other;
    const at = index.get(row.start);
    if (at !== undefined) line.values[at] += pick(row);
  }
  const series = [...lines.values()];
  if (ranked.length > SHOWN_GROUPS) series.push(other);
  return series;
}

function draw(body) {
  const common = { bucket: body.bucket, times: body.buckets };
  timeChart($("chart-requests"), { ...common, label: t("usage-chart-requests"), series: groupSeries(body, (r) => r.requests) });
  timeChart($("chart-input"), { ...common, label: t("usage-chart-input"), series: groupSeries(body, (r) => r.input_tokens) });
  timeChart($("chart-output"), { ...common, label: t("usage-chart-output"), series: groupSeries(body, (r) => r.output_tokens) });
  const waits = [];
  CLASSES.forEach((name, i) => {
    for (const p of ["p50", "p95"]) {
      waits.push({
        label: t("usage-queue-wait-series", { class: priorityName(name), percentile: p.slice(1) }),
        color: ["var(--chart-8)", "var(--chart-1)", "var(--chart-9)"][i],
        dash: p === "p95" ? [6, 4] : undefined,
        values: body.bucket_totals.map((row) => row.queue_wait_ms[name][p]),
      });
    }
  });
  timeChart($("chart-queue-wait"), { ...common, label: t("usage-chart-queue-wait"), series: waits, format: formatMs });
  // The reasons are the server's (gateway/core/outcomes.py REFUSALS): a new one is drawn unasked.
  const refusals = Object.keys(body.totals.refusals).map((reason) => ({
    label: tOr(`outcome-${reason.replaceAll("_", "-")}`, reason),
    values: body.bucket_totals.map((row) => row.refusals[reason] ?? 0),
  }));
  timeChart($("chart-refusals"), { ...common, label: t("usage-chart-refusals"), series: refusals });
}

function refusalCount(row) {
  return Object.values(row.refusals).reduce((sum, n) => sum + n, 0);
}

function waitsCell(row) {
  const lines = CLASSES.filter((name) => row.queue_wait_ms[name].requests > 0).map((name) =>
    h("span", { class: "row-sub" }, t("usage-wait-pair", { class: priorityName(name), p50: formatMs(row.queue_wait_ms[name].p50), p95: formatMs(row.queue_wait_ms[name].p95) })),
  );
  return lines.length ? h("span", { class: "cell-stack" }, lines) : t("value-none");
}

function renderTable(body) {
  $("usage-column-group").textContent = t(`usage-group-by-${body.group_by}`);
  $("usage-body").replaceChildren(
    ...body.results.map((row) =>
      h(
        "tr",
        {},
        h("th", { scope: "row" }, h("span", { class: "row-title" }, groupLabel(body.group_by, row))),
        cell(t("usage-requests"), formatCount(row.requests)),
        cell(t("usage-input-tokens"), formatCount(row.input_tokens)),
        cell(t("usage-output-tokens"), formatCount(row.output_tokens)),
        cell(t("usage-cached-tokens"), formatCount(row.cached_tokens)),
        cell(t("usage-refusals"), formatCount(refusalCount(row))),
        cell(t("usage-column-queue-wait"), waitsCell(row)),
      ),
    ),
  );
  $("usage-table-wrap").hidden = body.results.length === 0;
  $("usage-empty").hidden = body.results.length !== 0;
}

function renderTotals(totals) {
  const facts = [
    ["usage-requests", totals.requests],
    ["usage-input-tokens", totals.input_tokens],
    ["usage-output-tokens", totals.output_tokens],
    ["usage-cached-tokens", totals.cached_tokens],
    ["usage-refusals", refusalCount(totals)],
  ];
  $("usage-totals").replaceChildren(...facts.map(([id, value]) => h("li", {}, `${t(id)}: `, h("strong", {}, formatCount(value)))));
  $("usage-totals").hidden = false;
}

async function load() {
  clearMessage(pageAlert);
  const params = query();
  exportLink.href = `/api/v0/admin/usage?${params}&format=csv`;
  history.replaceState(null, "", `?${addressQuery()}`);
  $("usage-loading").hidden = false;
  try {
    const body = await api("GET", `/api/v0/admin/usage?${params}`);
    renderTotals(body.totals);
    renderTable(body);
    draw(body);
    $("usage-sampled").hidden = body.sample_every === 1;
    $("usage-sampled").textContent = t("usage-sampled", { every: body.sample_every });
    charts.hidden = false;
  } catch (error) {
    showError(pageAlert, error.message);
  } finally {
    $("usage-loading").hidden = true;
  }
}

form.elements.range.addEventListener("change", () => {
  syncCustom();
  form.elements.bucket.value = bucketFor(form.elements.range.value, form.elements.bucket.value);
});
form.addEventListener("submit", (event) => {
  event.preventDefault();
  load();
});

restoreFromAddress();
load();
