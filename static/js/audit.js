// Administration → Audit: who changed what and when, newest first, filtered by actor, kind,
// action, target and time, a page at a time; the filters live in the address too.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { $, cell, clearInvalid, formatInstant, tOr, yesNo } from "./widgets.js";

// aiplane/audit.py ACTIONS, in its order, as the server renders them into the page.
const ACTIONS = JSON.parse($("audit-actions").textContent);
const KINDS = [...new Set(ACTIONS.map((action) => action.split(".")[0]))];
const MASKED = "********"; // aiplane/audit.py MASKED: a secret is set, which one is never kept
const PAGE_SIZE = 50;
const FILTERS = ["actor", "kind", "action", "target", "since", "until"];
const TIMES = new Set(["since", "until"]);

const form = $("audit-filters");
const pageAlert = $("page-alert");
let page = 1;

const messageId = (prefix, word) => `${prefix}-${word.replaceAll(/[._]/g, "-")}`;
const kindName = (kind) => tOr(messageId("audit-kind", kind), kind);
const actionName = (action) => tOr(messageId("audit-action", action), action);

$("audit-filter-kind").append(...KINDS.map((kind) => h("option", { value: kind }, kindName(kind))));

// The action list follows the chosen kind, so it never offers a contradiction.
function fillActions() {
  const select = $("audit-filter-action");
  const kind = form.elements.kind.value;
  const current = select.value;
  const shown = ACTIONS.filter((action) => !kind || action.startsWith(`${kind}.`));
  select.replaceChildren(
    h("option", { value: "" }, t("audit-any")),
    ...shown.map((action) => h("option", { value: action }, actionName(action))),
  );
  select.value = shown.includes(current) ? current : "";
}
fillActions();
form.elements.kind.addEventListener("change", fillActions);

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
    const value = TIMES.has(name) ? isoFromLocal(control.value) : control.value.trim();
    if (value) params.set(name, value);
  }
  return params;
}

// One snapshot value in words: secrets as "hidden", flags as yes/no, lists joined, times local.
function shownValue(field, value) {
  if (value === null || value === undefined) return t("value-none");
  if (value === MASKED) return h("em", {}, t("audit-masked"));
  if (field.endsWith("_replaced") && value === true) return h("em", {}, t("audit-replaced"));
  if (typeof value === "boolean") return yesNo(value);
  if (Array.isArray(value)) return value.length ? value.join(", ") : t("value-none");
  if (typeof value === "object") return h("code", {}, JSON.stringify(value));
  if (field.endsWith("_at")) return formatInstant(value);
  return String(value);
}

function valueList(snapshot) {
  return h(
    "dl",
    { class: "audit-values" },
    ...Object.keys(snapshot)
      .sort()
      .flatMap((field) => [h("dt", {}, h("code", {}, field)), h("dd", {}, shownValue(field, snapshot[field]))]),
  );
}

function changesOf(entry) {
  if (entry.before === null || entry.after === null) {
    const snapshot = entry.after ?? entry.before ?? {};
    const count = Object.keys(snapshot).length;
    const summary = entry.before === null ? t("audit-created-with", { count }) : t("audit-deleted-with", { count });
    return h("details", { class: "audit-details" }, h("summary", {}, summary), valueList(snapshot));
  }
  return h(
    "ul",
    { class: "audit-changes" },
    ...entry.changes.map((change) =>
      h(
        "li",
        {},
        h("code", {}, change.field),
        " ",
        h("span", { class: "audit-before" }, shownValue(change.field, change.before)),
        h("span", { class: "audit-arrow", "aria-hidden": "true" }, " → "),
        h("span", { class: "audit-after" }, shownValue(change.field, change.after)),
      ),
    ),
  );
}

function renderRow(entry) {
  return h(
    "tr",
    {},
    cell(t("audit-time"), h("time", { datetime: entry.at }, formatInstant(entry.at))),
    cell(t("audit-actor"), entry.actor || h("em", {}, t("audit-system"))),
    cell(
      t("audit-action"),
      h("span", {}, h("span", { class: "row-title" }, actionName(entry.action)), h("span", { class: "row-sub" }, kindName(entry.kind))),
    ),
    cell(t("audit-target"), h("span", { class: "audit-target" }, entry.target)),
    cell(t("audit-changes"), changesOf(entry)),
  );
}

// A refused filter in the page's language, naming the control by its label.
function filterError(error, control) {
  if (error.code !== "invalid_filter" || !control) return error.message;
  if (error.param === "until" && form.elements.since.value) return t("audit-invalid-range");
  return t("audit-invalid-filter", { field: control.labels[0]?.textContent ?? error.param });
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
    const answer = await api("GET", `/api/v0/admin/audit?${params}`);
    $("audit-loading").hidden = true;
    $("audit-body").replaceChildren(...answer.results.map(renderRow));
    $("audit-empty").textContent = query().size > 0 ? t("audit-no-match") : t("audit-empty");
    $("audit-empty").hidden = answer.results.length > 0;
    $("audit-wrap").hidden = answer.results.length === 0;
    $("audit-pager").hidden = answer.count === 0;
    const pages = Math.max(1, Math.ceil(answer.count / answer.page_size));
    $("audit-page-info").textContent = t("audit-page-of", { page: answer.page, pages, count: answer.count });
    $("audit-prev").disabled = answer.page <= 1;
    $("audit-next").disabled = !answer.has_next;
  } catch (error) {
    $("audit-loading").hidden = true;
    const control = error.param ? form.elements[error.param] : null;
    if (control) control.setAttribute("aria-invalid", "true");
    showError(pageAlert, filterError(error, control));
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  clearInvalid(form);
  page = 1;
  load();
});

$("audit-reset").addEventListener("click", () => {
  form.reset();
  fillActions();
  clearInvalid(form);
  page = 1;
  load();
});

$("audit-prev").addEventListener("click", () => {
  page = Math.max(1, page - 1);
  load();
});

$("audit-next").addEventListener("click", () => {
  page += 1;
  load();
});

// Start from the address: /admin/audit/?actor=carol&kind=token&page=2
const start = new URLSearchParams(location.search);
for (const name of FILTERS) {
  const value = start.get(name);
  if (!value) continue;
  form.elements[name].value = TIMES.has(name) ? localFromIso(value) : value;
  if (name === "kind") fillActions();
}
page = Math.max(1, Number.parseInt(start.get("page") || "1", 10) || 1);
load();
