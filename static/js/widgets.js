// Building blocks shared by the administration pages and the playground: priority selects, form
// fields, responsive table cells, the confirmation dialog and small value formatters.
import { formatDate, has, lang, t } from "./i18n.js";
import { clearMessage, h } from "./ui.js";

export const LEVELS = ["low", "medium", "high"];
export const INHERIT = ""; // the <select> value for null, "inherit"

export const $ = (id) => document.getElementById(id);

export function priorityName(level) {
  return level ? t(`priority-${level}`) : t("value-none");
}

// inherit (with the inherited level named when known), then low, medium, high.
export function fillPrioritySelect(select, current, inherited = null) {
  select.replaceChildren(
    h("option", { value: INHERIT }, inherited ? t("priority-inherit-with", { priority: priorityName(inherited) }) : t("priority-inherit")),
    ...LEVELS.map((level) => h("option", { value: level }, priorityName(level))),
  );
  select.value = current ?? INHERIT;
}

export function priorityValue(select) {
  return select.value === INHERIT ? null : select.value;
}

// A message when the catalog has it, else the fallback (a value from the server, say).
export function tOr(id, fallback, args = {}) {
  return has(id) ? t(id, args) : fallback;
}

// A table cell that carries its column name, shown as a label when rows stack on a phone.
export function cell(label, ...children) {
  return h("td", { "data-label": label }, ...children);
}

// The Actions cell of a table row: Edit and Delete as one labelled group.
export function actionsCell(label, { onEdit, onDelete }) {
  return cell(
    t("column-actions"),
    h(
      "div",
      { class: "actions row-actions", role: "group", "aria-label": label },
      h("button", { type: "button", class: "secondary small", onclick: onEdit }, t("action-edit")),
      h("button", { type: "button", class: "danger small", onclick: onDelete }, t("action-delete")),
    ),
  );
}

export function badge(kind, text) {
  return h("span", { class: `badge ${kind}` }, text);
}

// "active", "revoked" or "expired": a token's state, also its badge kind and message suffix.
export function tokenState(token) {
  if (token.revoked) return "revoked";
  if (token.expires_at && new Date(token.expires_at) <= new Date()) return "expired";
  return "active";
}

// Who revoked a token and when, for its owner and for administrators.
export function revokedText(token) {
  const date = formatDate(token.revoked_at);
  return token.revoked_by ? t("token-revoked-by", { name: token.revoked_by, date }) : t("token-revoked-on", { date });
}

// The live queue connection's state ("connecting", "live", "polling", "offline") in words.
export function liveModeText(mode) {
  return {
    connecting: t("live-connecting"),
    live: t("live-connected"),
    polling: t("live-polling"),
    offline: t("live-offline"),
    "not-admin": t("live-stopped"),
    "signed-out": t("live-stopped"),
  }[mode];
}

// Why a live view ended for good (the session lost the right to watch); null while it goes on.
export function liveEndedText(mode) {
  if (mode === "not-admin") return t("live-not-admin");
  if (mode === "signed-out") return t("live-signed-out");
  return null;
}

export function yesNo(value) {
  if (value === null || value === undefined) return t("value-not-reported");
  return value ? t("value-yes") : t("value-no");
}

const numberFormat = new Intl.NumberFormat(lang, { maximumFractionDigits: 1 });

export function formatNumber(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return t("value-none");
  return numberFormat.format(value);
}

// "4 s", "2 min 5 s", "1 h 3 min": an age or a wait, rounded to whole seconds.
export function formatSeconds(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const secs = total % 60;
  if (hours) return t("duration-hours", { hours, minutes });
  if (minutes) return t("duration-minutes", { minutes, seconds: secs });
  return t("duration-seconds", { seconds: secs });
}

// A waiter's estimated wait, as rough as it is: "under 1 s", "about 4 s", "about 2 min",
// "about 1 h"; "unknown" for null (no pace measured yet, or shared admission).
export function formatEstimate(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return t("queue-estimate-unknown");
  if (Math.round(seconds) < 1) return t("queue-estimate-under-second");
  if (Math.round(seconds) < 60) return t("queue-estimate-seconds", { seconds: formatNumber(Math.round(seconds)) });
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return t("queue-estimate-minutes", { minutes: formatNumber(minutes) });
  return t("queue-estimate-hours", { hours: formatNumber(Math.round(seconds / 3600)) });
}

// Short waits in milliseconds, longer ones in seconds: "0.4 ms", "812 ms", "20.4 s".
export function formatMs(ms) {
  if (ms === null || ms === undefined) return t("value-none");
  if (ms < 1000) return t("duration-ms", { ms: formatNumber(ms) });
  return t("duration-seconds", { seconds: formatNumber(ms / 1000) });
}

const preciseTime = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "medium" });

// A moment to the second, for records that answer "when exactly".
export function formatInstant(value) {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? t("value-none") : preciseTime.format(date);
}

// Whole-number input: the number when it is one, else the raw text (the server names the error).
export function intOrRaw(input) {
  const raw = input.value.trim();
  if (raw === "") return null;
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

// "a, b\nc" -> ["a", "b", "c"]
export function splitList(text) {
  return text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);
}

export function markInvalid(control, alertId) {
  if (!control) return;
  control.setAttribute("aria-invalid", "true");
  const described = (control.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
  if (alertId && !described.includes(alertId)) {
    described.push(alertId);
    control.setAttribute("aria-describedby", described.join(" "));
  }
}

export function clearInvalid(root) {
  for (const control of root.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
}

// An editor opened again starts clean: empty fields, no earlier error, nothing marked invalid.
export function resetEditor(form, alertRegion) {
  form.reset();
  clearMessage(alertRegion);
  clearInvalid(form);
}

// The page's shared confirmation dialog (templates/partials/confirm.html).
export function confirmAction(message, label) {
  const dialog = $("confirm-dialog");
  const ok = $("confirm-ok");
  const cancel = $("confirm-cancel");
  $("confirm-message").textContent = message;
  ok.textContent = label;
  return new Promise((resolve) => {
    const finish = (answer) => {
      ok.onclick = null;
      cancel.onclick = null;
      dialog.onclose = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    ok.onclick = () => finish(true);
    cancel.onclick = () => finish(false);
    dialog.onclose = () => finish(false);
    dialog.showModal();
    cancel.focus();
  });
}

// A checkbox list (members, groups, backends) inside a fieldset; returns the checked values.
export function fillCheckList(container, idPrefix, values, checked) {
  const chosen = new Set(checked);
  container.replaceChildren(
    ...values.map((value, index) => {
      const id = `${idPrefix}-${index}`;
      return h(
        "li",
        {},
        h("input", { type: "checkbox", id, value, checked: chosen.has(value) }),
        h("label", { for: id }, value),
      );
    }),
  );
}

export function checkedValues(container) {
  return [...container.querySelectorAll("input[type=checkbox]:checked")].map((box) => box.value);
}

// An API error in the person's language, naming the field it is about when the page knows it.
export function describeError(error, labels = {}) {
  const label = error.param ? labels[error.param] : null;
  return label ? t("error-in-field", { field: label, message: error.message }) : error.message;
}
