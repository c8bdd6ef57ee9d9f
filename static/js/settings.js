// Administration → Settings: a form generated from the typed settings catalog that
// GET /api/v0/admin/settings returns (kind, choices, min, max), saved all or nothing.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError, showStatus } from "./ui.js";
import { $, clearInvalid, intOrRaw, markInvalid, tOr } from "./widgets.js";

const form = $("settings-form");
const sections = $("settings-sections");
const pageAlert = $("page-alert");
const pageStatus = $("page-status");

let catalog = []; // the last answer's settings

// "gateway.priority_enabled" -> "setting-gateway-priority-enabled"
function messageId(key) {
  return "setting-" + key.replaceAll(".", "-").replaceAll("_", "-");
}

function controlId(key) {
  return "setting-" + key.replaceAll(".", "-");
}

function labelOf(spec) {
  return tOr(messageId(spec.key), spec.key);
}

function choiceLabel(spec, choice) {
  return tOr(`${messageId(spec.key)}-${choice}`, tOr(`priority-${choice}`, choice));
}

function valueText(spec, value) {
  if (spec.kind === "bool") return value ? t("value-on") : t("value-off");
  if (spec.kind === "choice") return choiceLabel(spec, value);
  return String(value);
}

function sectionTitle(section) {
  return tOr("settings-section-" + section.replaceAll(".", "-").replaceAll("_", "-"), section);
}

function sectionIntro(section) {
  return tOr("settings-section-" + section.replaceAll(".", "-").replaceAll("_", "-") + "-intro", "");
}

function renderField(spec) {
  const id = controlId(spec.key);
  const hintId = `${id}-hint`;
  const hint = [tOr(`${messageId(spec.key)}-hint`, ""), t("setting-default", { value: valueText(spec, spec.default) })]
    .filter(Boolean)
    .join(" ");
  const hintEl = h("p", { class: "hint", id: hintId }, hint);
  const common = { id, name: spec.key, "aria-describedby": hintId, dataset: { key: spec.key } };

  if (spec.kind === "bool") {
    const box = h("input", { type: "checkbox", ...common, checked: Boolean(spec.value) });
    return h("div", { class: "field check" }, box, h("div", {}, h("label", { for: id }, labelOf(spec)), hintEl));
  }
  let control;
  if (spec.kind === "choice") {
    control = h("select", common, ...spec.choices.map((choice) => h("option", { value: choice }, choiceLabel(spec, choice))));
    control.value = spec.value;
  } else {
    control = h("input", {
      type: "number",
      inputmode: "numeric",
      step: "1",
      min: spec.min ?? undefined,
      max: spec.max ?? undefined,
      value: String(spec.value),
      class: "narrow",
      ...common,
    });
  }
  return h("div", { class: "field" }, h("label", { for: id }, labelOf(spec)), control, hintEl);
}

function render() {
  const bySection = new Map();
  for (const spec of catalog) {
    if (!bySection.has(spec.section)) bySection.set(spec.section, []);
    bySection.get(spec.section).push(spec);
  }
  sections.replaceChildren(
    ...[...bySection.entries()].map(([section, specs]) => {
      const headingId = "section-" + section.replaceAll(".", "-");
      const intro = sectionIntro(section);
      return h(
        "section",
        { class: "card form-section", "aria-labelledby": headingId },
        h("h2", { id: headingId }, sectionTitle(section)),
        intro ? h("p", { class: "hint section-intro" }, intro) : null,
        h("div", { class: "form-grid" }, specs.map(renderField)),
      );
    }),
  );
  $("settings-loading").hidden = true;
  form.hidden = false;
}

function values() {
  const out = {};
  for (const spec of catalog) {
    const control = $(controlId(spec.key));
    if (spec.kind === "bool") out[spec.key] = control.checked;
    else if (spec.kind === "int") out[spec.key] = intOrRaw(control);
    else out[spec.key] = control.value;
  }
  return out;
}

// The server's code in the person's language, naming the setting (and its range) when it can.
function describe(error) {
  const spec = catalog.find((item) => item.key === error.param);
  if (!spec) return error.message;
  if (error.code === "invalid_setting" && spec.kind === "int" && spec.min !== null && spec.max !== null) {
    return t("setting-error-range", { setting: labelOf(spec), min: spec.min, max: spec.max });
  }
  return t("setting-error", { setting: labelOf(spec), message: error.message });
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearMessage(pageAlert);
  clearMessage(pageStatus);
  clearInvalid(form);
  const save = $("settings-save");
  save.disabled = true;
  try {
    const answer = await api("POST", "/api/v0/admin/settings", values());
    catalog = answer.settings;
    render();
    showStatus(pageStatus, t("settings-saved"));
  } catch (error) {
    if (error.param) markInvalid($(controlId(error.param)), "page-alert");
    showError(pageAlert, describe(error));
  } finally {
    save.disabled = false;
  }
});

async function load() {
  try {
    catalog = (await api("GET", "/api/v0/admin/settings")).settings;
    render();
  } catch (error) {
    $("settings-loading").hidden = true;
    showError(pageAlert, error.message);
  }
}

load();
