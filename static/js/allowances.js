// Usage allowances in the browser: the limits editor (used by the group editor and the token
// allowance dialog), and the words for a list of limits. An allowance is null ("no say" on a
// group, "the owner's" on a token) or a list of {measure, window, limit, model}.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError, showStatus } from "./ui.js";
import { clearInvalid, formatNumber, markInvalid } from "./widgets.js";

export const MEASURES = ["requests", "tokens", "input_tokens", "output_tokens"];
export const WINDOWS = ["minute", "day", "month"];

const dash = (value) => value.replaceAll("_", "-");

export function measureName(measure) {
  return t(`allowance-measure-${dash(measure)}`);
}

export function windowName(window) {
  return t(`allowance-window-${window}`);
}

// "Tokens (input + output) per day: 1,000" for each limit; "No limits" for none.
export function describeLimits(limits) {
  if (!limits || !limits.length) return t("allowance-none");
  return limits
    .map((limit) => {
      const args = { measure: measureName(limit.measure), window: windowName(limit.window), amount: formatNumber(limit.limit) };
      return limit.model ? t("allowance-summary-model", { ...args, model: limit.model }) : t("allowance-summary", args);
    })
    .join("; ");
}

function options(values, names, current) {
  return values.map((value) => h("option", { value, selected: value === current }, names(value)));
}

let editors = 0;

// A fieldset that edits one allowance: a checkbox (set / not set) and a row per limit.
//   const editor = allowanceEditor({ kind: "group" | "token" | "token-admin", alertId });
//   form.append(editor.element); editor.set(value); editor.value() -> list | null | throws
export function allowanceEditor({ kind, alertId }) {
  editors += 1;
  const prefix = `allowance-${editors}`;
  const toggle = h("input", { type: "checkbox", id: `${prefix}-set`, "aria-describedby": `${prefix}-hint` });
  const list = h("ul", { class: "allowance-limits", id: `${prefix}-limits` });
  const add = h("button", { type: "button", class: "secondary small" }, t("allowance-add"));
  const hint = h("p", { class: "hint", id: `${prefix}-hint` }, t(`allowance-set-${kind}-hint`));
  const empty = h("p", { class: "hint allowance-empty" }, t(kind === "group" ? "allowance-empty-group" : "allowance-empty-token"));
  const element = h(
    "fieldset",
    { class: "field allowance-editor" },
    h("legend", {}, t("allowance-legend")),
    h("div", { class: "field check" }, toggle, h("div", {}, h("label", { for: `${prefix}-set` }, t(`allowance-set-${kind}`)), hint)),
    list,
    empty,
    add,
  );
  let rows = 0;

  function renumber() {
    [...list.children].forEach((row, index) => {
      row.querySelector("button").setAttribute("aria-label", t("allowance-remove", { n: index + 1 }));
    });
    empty.hidden = !toggle.checked || list.children.length > 0;
  }

  function addRow(limit = { measure: "tokens", window: "day", limit: "", model: null }) {
    rows += 1;
    const id = `${prefix}-${rows}`;
    const field = (label, control) => h("div", { class: "allowance-cell" }, h("label", { for: control.id }, label), control);
    const row = h(
      "li",
      { class: "allowance-limit" },
      field(t("allowance-measure"), h("select", { id: `${id}-measure`, name: "measure" }, options(MEASURES, measureName, limit.measure))),
      field(t("allowance-window"), h("select", { id: `${id}-window`, name: "window" }, options(WINDOWS, windowName, limit.window))),
      field(t("allowance-amount"), h("input", { id: `${id}-limit`, name: "limit", type: "number", min: "0", step: "1", inputmode: "numeric", value: String(limit.limit ?? "") })),
      field(t("allowance-model"), h("input", { id: `${id}-model`, name: "model", type: "text", maxlength: "200", autocomplete: "off", placeholder: t("allowance-model-all"), value: limit.model || "" })),
      h("button", { type: "button", class: "danger small", onclick: () => { row.remove(); renumber(); } }, t("allowance-remove-short")),
    );
    list.append(row);
    renumber();
    return row;
  }

  function sync() {
    list.hidden = !toggle.checked;
    add.hidden = !toggle.checked;
    renumber();
  }

  toggle.addEventListener("change", sync);
  add.addEventListener("click", () => addRow().querySelector("input[name=limit]").focus());

  return {
    element,
    set(value) {
      list.replaceChildren();
      toggle.checked = value !== null && value !== undefined;
      for (const limit of value || []) addRow(limit);
      sync();
    },
    // The allowance to send; throws an Error (its message for the alert) on a limit that is no
    // whole number, with the offending input marked.
    value() {
      clearInvalid(element);
      if (!toggle.checked) return null;
      return [...list.children].map((row) => {
        const amount = row.querySelector("input[name=limit]");
        const raw = amount.value.trim();
        if (!/^\d+$/.test(raw)) {
          markInvalid(amount, alertId);
          amount.focus();
          throw new Error(t("allowance-limit-invalid"));
        }
        const model = row.querySelector("input[name=model]").value.trim();
        return {
          measure: row.querySelector("select[name=measure]").value,
          window: row.querySelector("select[name=window]").value,
          limit: Number(raw),
          model: model || null,
        };
      });
    },
    // Mark the control an API error names (param "allowance.1.limit"; "allowance": the toggle).
    markParam(param) {
      const match = /^allowance\.(\d+)(?:\.(\w+))?$/.exec(param || "");
      if (!match) {
        markInvalid(toggle, alertId);
        return;
      }
      const row = list.children[Number(match[1])];
      if (!row) return;
      const control = row.querySelector(`[name=${match[2] || "measure"}]`);
      markInvalid(control, alertId);
    },
  };
}

// --- the token allowance dialog (the personal Tokens page and Administration → Tokens) ----------

let dialog = null;

function buildDialog() {
  const alert = h("div", { class: "alert", role: "alert", tabindex: "-1", id: "allowance-alert", hidden: true });
  const title = h("h2", { id: "allowance-title" });
  const owner = h("p", { class: "hint", id: "allowance-owner" });
  const cancel = h("button", { type: "button", class: "secondary", id: "allowance-cancel" }, t("action-cancel"));
  const submit = h("button", { type: "submit", id: "allowance-submit" }, t("action-save"));
  const slot = h("div", {});
  const form = h("form", { novalidate: true }, title, alert, owner, slot, h("div", { class: "actions" }, cancel, submit));
  const element = h("dialog", { id: "allowance-dialog", class: "wide", "aria-labelledby": "allowance-title" }, form);
  document.body.append(element);
  cancel.addEventListener("click", () => element.close());
  return { element, form, title, alert, owner, slot, submit, editors: {} };
}

// Open the dialog for one token; `save(value)` stores it (and throws an ApiError when refused),
// `done(updated)` runs after a successful save.
export function openTokenAllowance({ token, admin, ownerAllowance, save, done }) {
  if (dialog === null) dialog = buildDialog();
  const kind = admin ? "token-admin" : "token";
  if (!dialog.editors[kind]) dialog.editors[kind] = allowanceEditor({ kind, alertId: "allowance-alert" });
  const editor = dialog.editors[kind];
  dialog.slot.replaceChildren(editor.element);
  clearMessage(dialog.alert);
  dialog.title.textContent = t("allowance-dialog-title", { name: token.name });
  dialog.owner.textContent = t(admin ? "allowance-owner-of" : "allowance-owner", { limits: describeLimits(ownerAllowance) });
  editor.set(token.allowance);
  dialog.form.onsubmit = async (event) => {
    event.preventDefault();
    clearMessage(dialog.alert);
    let value;
    try {
      value = editor.value();
    } catch (error) {
      showError(dialog.alert, error.message);
      return;
    }
    dialog.submit.disabled = true;
    try {
      const updated = await save(value);
      dialog.element.close();
      done(updated);
    } catch (error) {
      editor.markParam(error.param);
      showError(dialog.alert, error.message);
    } finally {
      dialog.submit.disabled = false;
    }
  };
  dialog.element.showModal();
  editor.element.querySelector("input[type=checkbox]").focus();
}

// The small "Allowance" part of a token's card or row: what applies, and the button to edit.
export function tokenAllowanceControl({ token, admin, ownerAllowance, status, onSaved }) {
  const summary = h("span", { class: "allowance-summary" }, describeLimits(token.effective_allowance));
  const url = admin ? `/api/v0/admin/tokens/${token.id}/allowance` : `/api/v0/tokens/${token.id}/allowance`;
  const button = h(
    "button",
    {
      type: "button",
      class: "secondary small",
      "aria-label": t("allowance-button-label", { name: token.name }),
      onclick: () =>
        openTokenAllowance({
          token,
          admin,
          ownerAllowance: typeof ownerAllowance === "function" ? ownerAllowance() : ownerAllowance,
          save: (value) => api("PUT", url, { allowance: value }),
          done: (updated) => {
            Object.assign(token, updated);
            summary.textContent = describeLimits(token.effective_allowance);
            if (status) showStatus(status, t("allowance-saved", { name: token.name }));
            if (onSaved) onSaved(token);
            button.focus();
          },
        }),
    },
    t("allowance-button"),
  );
  return h("div", { class: "allowance-control" }, summary, button);
}
