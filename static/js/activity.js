// Administration → Activity: the per-request activity records, newest first, filtered by user,
// token (its name or id), model, class, outcome and time, a page at a time. The filters and the
// page live in the address: each search is a history entry, so back and forward retrace them.
// A row opens the record's every field, its error text included.
import { api } from "./api.js";
import { lang, t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { $, badge, cell, clearInvalid, formatInstant, formatMs, formatNumber, priorityName, tOr } from "./widgets.js";

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

// Tokens the engine reported: input → output, and how many of the input came from its cache;
// or the gateway's own count, said so, of a stream whose engine reported none.
function tokens(record) {
  if (record.input_tokens === null && record.output_tokens === null) return t("value-none");
  const used = t("activity-tokens-used", { input: record.input_tokens ?? 0, output: record.output_tokens ?? 0 });
  return h(
    "span",
    {},
    h("span", {}, used),
    record.cached_tokens ? h("span", { class: "row-sub" }, t("activity-tokens-cached", { cached: record.cached_tokens })) : null,
    record.usage_estimated ? h("span", { class: "row-sub" }, t("activity-tokens-estimated")) : null,
  );
}

// The row's time on two lines that never break: the day, then the time to the second.
const dayFormat = new Intl.DateTimeFormat(lang, { dateStyle: "medium" });
const clockFormat = new Intl.DateTimeFormat(lang, { timeStyle: "medium" });
const dayOf = (value) => dayFormat.format(new Date(value));
const clockOf = (value) => clockFormat.format(new Date(value));

function surfaceName(surface) {
  return surface ? tOr(`surface-${surface}`, surface) : t("value-none");
}

// A record refused or cut short before its caller was known has no class: "none", no badge.
function classBadge(record) {
  return record.class ? badge(`class-${record.class}`, priorityName(record.class)) : t("value-none");
}

function orNone(value) {
  return value === null || value === undefined || value === "" ? t("value-none") : String(value);
}

// Every field of the record, in the order a person reads its story.
function recordFields(record) {
  const token = record.token_name || record.token_id !== null
    ? `${record.token_name || t("value-none")}${record.token_id !== null ? ` (#${record.token_id})` : ""}`
    : t("activity-browser");
  return [
    [t("activity-time"), h("time", { datetime: record.at }, formatInstant(record.at))],
    [t("activity-user"), orNone(record.username)],
    [t("activity-filter-token"), token],
    [t("activity-model"), record.model ? h("code", {}, record.model) : t("value-none")],
    [t("activityui-surface"), surfaceName(record.surface)],
    [t("activityui-path"), record.path ? h("code", {}, record.path) : t("value-none")],
    [t("activity-backend"), orNone(record.backend)],
    [t("activity-class"), classBadge(record)],
    [t("activityui-hint"), orNone(record.hint)],
    [t("activityui-score"), record.score === null ? t("value-none") : formatNumber(record.score)],
    [t("activity-queue-wait"), formatMs(record.queue_ms)],
    [t("activityui-first-byte"), formatMs(record.first_byte_ms)],
    [t("activity-duration"), formatMs(record.duration_ms)],
    [t("activity-outcome"), badge(outcomeKind(record.outcome), outcomeName(record.outcome))],
    [t("activity-status"), record.status ? String(record.status) : t("value-none")],
    [t("activityui-input-tokens"), orNone(record.input_tokens)],
    [t("activityui-output-tokens"), orNone(record.output_tokens)],
    [t("activityui-cached-tokens"), orNone(record.cached_tokens)],
    [t("activityui-error"), record.error ? h("span", { class: "record-error" }, record.error) : t("value-none")],
    [t("activityui-record-id"), String(record.id)],
  ];
}

const recordDialog = $("record-dialog");

function openRecord(record) {
  $("record-fields").replaceChildren(
    ...recordFields(record).flatMap(([label, value]) => [h("dt", {}, label), h("dd", {}, value)]),
  );
  recordDialog.showModal();
  $("record-close").focus();
}

$("record-close").addEventListener("click", () => recordDialog.close());

// A cell whose names give way first when the table is short of room (cut with an ellipsis).
function fluid(td, share) {
  td.classList.add("fluid", `share-${share}`);
  return td;
}

function renderRow(record) {
  const opener = h(
    "button",
    {
      type: "button",
      class: "link-button",
      "aria-haspopup": "dialog",
      "aria-label": t("activityui-open", { time: formatInstant(record.at) }),
      onclick: () => openRecord(record),
    },
    h("time", { datetime: record.at }, dayOf(record.at), h("span", { class: "row-sub" }, clockOf(record.at))),
  );
  return h(
    "tr",
    {
      class: "openable",
      // A click anywhere on the row opens it; the keyboard has the button in the first cell.
      onclick: (event) => {
        if (event.target.closest("button, a") || getSelection().toString()) return;
        openRecord(record);
      },
    },
    cell(t("activity-time"), opener),
    // One child per cell: on a phone a cell is a two-column grid (its label, then its value).
    fluid(cell(
      t("activity-user"),
      h(
        "span",
        {},
        h("span", { class: "row-title clip", title: record.username }, record.username || t("value-none")),
        record.token_name
          ? h("span", { class: "row-sub clip", title: record.token_name }, t("activity-token", { name: record.token_name }))
          : h("span", { class: "row-sub" }, t("activity-browser")),
      ),
    ), "user"),
    fluid(cell(
      t("activity-model"),
      h(
        "span",
        {},
        record.model ? h("code", { class: "clip", title: record.model }, record.model) : t("value-none"),
        record.surface ? h("span", { class: "row-sub" }, surfaceName(record.surface)) : null,
      ),
    ), "model"),
    fluid(cell(t("activity-backend"), record.backend ? h("span", { class: "clip", title: record.backend }, record.backend) : t("value-none")), "backend"),
    cell(
      t("activity-class"),
      h(
        "span",
        {},
        classBadge(record),
        record.hint ? h("span", { class: "row-sub" }, t("activity-hint", { hint: record.hint })) : null,
      ),
    ),
    cell(t("activity-queue-wait"), formatMs(record.queue_ms)),
    cell(t("activityui-first-byte"), formatMs(record.first_byte_ms)),
    fluid(cell(
      t("activity-outcome"),
      h(
        "span",
        {},
        badge(outcomeKind(record.outcome), outcomeName(record.outcome)),
        record.error ? h("span", { class: "row-sub clip", title: record.error }, record.error) : null,
      ),
    ), "outcome"),
    cell(t("activity-status"), record.status ? String(record.status) : t("value-none")),
    cell(t("activity-duration"), formatMs(record.duration_ms)),
    cell(t("activity-tokens"), tokens(record)),
  );
}

// The address of a search: its filters and page (page 1 is left out).
function address() {
  const shown = query();
  if (page > 1) shown.set("page", String(page));
  return shown.toString() ? `?${shown}` : location.pathname;
}

// A new search is a new history entry; the first load and back/forward only show one.
async function load({ remember = true } = {}) {
  clearMessage(pageAlert);
  const params = query();
  const target = address();
  if (remember && target !== (location.search || location.pathname)) history.pushState(null, "", target);
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
    $("page-info").textContent = t("activityui-page-of", { page: answer.page, pages, count: answer.count });
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
  clearInvalid(form);
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

// The form and page from the address: /admin/activity/?user=alice&page=2
function restore() {
  const start = new URLSearchParams(location.search);
  for (const name of FILTERS) {
    const value = start.get(name) || "";
    form.elements[name].value = value && (name === "since" || name === "until") ? localFromIso(value) : value;
  }
  clearInvalid(form);
  page = Math.max(1, Number.parseInt(start.get("page") || "1", 10) || 1);
}

window.addEventListener("popstate", () => {
  if (recordDialog.open) recordDialog.close();
  restore();
  load({ remember: false });
});

restore();
load({ remember: false });
