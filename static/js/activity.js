// Administration → Activity: the per-request activity records, newest first, filtered by user,
// token (its name or id), model, class, outcome and time, a page at a time. The filters live in
// the address too.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { $, badge, cell, clearInvalid, formatInstant, formatMs, priorityName, tOr } from "./widgets.js";

const OUTCOMES = ["immediate", "waited", "expired", "cancelled", "rejected", "limited", "refused", "unavailable", "client_closed", "upstream_error", "error"];
const PAGE_SIZE = 50;
const FILTERS = ["user", "token", "model", "class", "outcome", "since", "until"];

const form = $("activity-filters");
const pageAlert = $("page-alert");
let page = 1;

function outcomeName(outcome) {
  return tOr(`outcome-${outcome.replaceAll("_", "-")}`, outcome);
}

function outcomeKind(outcome) {
  if (outcome === "immediate" || outcome === "waited") return "active";
  if (outcome === "cancelled" || outcome === "client_closed") return "";
  return "revoked";
}

$("filter-outcome").append(...OUTCOMES.map((outcome) => h("option", { value: outcome }, outcomeName(outcome))));

// datetime-local holds local time without a zone; the API wants ISO 8601 with one.
function isoFromLocal(value) {
  if (!value) return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

function localFromIso(value) {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function query() {
  const params = new URLSearchParams();
  for (const name of FILTERS) {
    const control = form.elements[name];
    const value = name === "since" || name === "until" ? isoFromLocal(control.value) : control.value.trim();
    if (value) params.set(name, value);
  }
  return params;
}

// Tokens the engine reported: input → output, and how many of the input came from its cache.
function tokens(record) {
  if (record.input_tokens === null && record.output_tokens === null) return t("value-none");
  const used = t("activity-tokens-used", { input: record.input_tokens ?? 0, output: record.output_tokens ?? 0 });
  return h(
    "span",
    {},
    h("span", {}, used),
    record.cached_tokens ? h("span", { class: "row-sub" }, t("activity-tokens-cached", { cached: record.cached_tokens })) : null,
  );
}

function renderRow(record) {
  return h(
    "tr",
    {},
    cell(t("activity-time"), h("time", { datetime: record.at }, formatInstant(record.at))),
    // One child per cell: on a phone a cell is a two-column grid (its label, then its value).
    cell(
      t("activity-user"),
      h(
        "span",
        {},
        h("span", { class: "row-title" }, record.username || t("value-none")),
        h("span", { class: "row-sub" }, record.token_name ? t("activity-token", { name: record.token_name }) : t("activity-browser")),
      ),
    ),
    cell(
      t("activity-model"),
      h(
        "span",
        {},
        record.model ? h("code", {}, record.model) : t("value-none"),
        record.surface ? h("span", { class: "row-sub" }, tOr(`surface-${record.surface}`, record.surface)) : null,
      ),
    ),
    cell(t("activity-backend"), record.backend || t("value-none")),
    cell(
      t("activity-class"),
      h(
        "span",
        {},
        badge(`class-${record.class}`, priorityName(record.class)),
        record.hint ? h("span", { class: "row-sub" }, t("activity-hint", { hint: record.hint })) : null,
      ),
    ),
    cell(t("activity-queue-wait"), formatMs(record.queue_ms)),
    cell(t("activity-outcome"), badge(outcomeKind(record.outcome), outcomeName(record.outcome))),
    cell(t("activity-status"), record.status ? String(record.status) : t("value-none")),
    cell(t("activity-duration"), formatMs(record.duration_ms)),
    cell(t("activity-tokens"), tokens(record)),
  );
}

async function load() {
  clearMessage(pageAlert);
  const params = query();
  const shown = new URLSearchParams(params);
  if (page > 1) shown.set("page", String(page));
  history.replaceState(null, "", shown.toString() ? `?${shown}` : location.pathname);
  params.set("page", String(page));
  params.set("page_size", String(PAGE_SIZE));
  try {
    const answer = await api("GET", `/api/v0/admin/activity?${params}`);
    $("activity-loading").hidden = true;
    $("activity-body").replaceChildren(...answer.results.map(renderRow));
    $("activity-empty").textContent = query().size > 0 ? t("activity-no-match") : t("activity-empty");
    $("activity-empty").hidden = answer.count > 0;
    $("activity-wrap").hidden = answer.count === 0;
    $("activity-pager").hidden = answer.count === 0;
    const pages = Math.max(1, Math.ceil(answer.count / answer.page_size));
    $("page-info").textContent = t("activity-page-of", { page: answer.page, pages, count: answer.count });
    $("page-prev").disabled = answer.page <= 1;
    $("page-next").disabled = !answer.has_next;
  } catch (error) {
    $("activity-loading").hidden = true;
    const control = error.param ? form.elements[error.param] : null;
    if (control) control.setAttribute("aria-invalid", "true");
    showError(pageAlert, error.message);
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  clearInvalid(form);
  page = 1;
  load();
});

$("filter-reset").addEventListener("click", () => {
  form.reset();
  page = 1;
  load();
});

$("page-prev").addEventListener("click", () => {
  page = Math.max(1, page - 1);
  load();
});

$("page-next").addEventListener("click", () => {
  page += 1;
  load();
});

// Start from the address: /admin/activity/?user=alice&page=2
const start = new URLSearchParams(location.search);
for (const name of FILTERS) {
  const value = start.get(name);
  if (!value) continue;
  form.elements[name].value = name === "since" || name === "until" ? localFromIso(value) : value;
}
page = Math.max(1, Number.parseInt(start.get("page") || "1", 10) || 1);
load();
