// The page's messages: the dictionary /i18n/<lang>.js puts in window.AIPLANE_I18N, generated on
// the server from the same Fluent catalogs as the templates. Placeholders look like {name}.

const data = window.AIPLANE_I18N || { lang: "en", messages: {} };
const messages = data.messages || {};
// For messages that select on a count: { variable, forms: { one, few, many, other } }, the
// categories being CLDR's, which the browser's Intl.PluralRules names the same way.
const plurals = data.plurals || {};

export const lang = data.lang || document.documentElement.lang || "en";

export function has(id) {
  return Object.prototype.hasOwnProperty.call(messages, id);
}

let pluralRules = null;

function pluralText(id, args) {
  const plural = plurals[id];
  if (!plural) return null;
  const count = args[plural.variable];
  if (typeof count !== "number" || !Number.isFinite(count)) return null;
  pluralRules ??= new Intl.PluralRules(lang);
  return plural.forms[pluralRules.select(count)] ?? null;
}

// t("token-revoked", { name: "ci" }) -> "Token “ci” revoked." (the id itself when unknown);
// a count picks its plural form: t("activityui-page-of", { page: 1, pages: 1, count: 2 }).
export function t(id, args = {}) {
  const text = pluralText(id, args) ?? (has(id) ? messages[id] : id);
  return text.replace(/\{([A-Za-z][\w-]*)\}/g, (whole, name) =>
    Object.prototype.hasOwnProperty.call(args, name) ? String(args[name]) : whole,
  );
}

// Dates in the page's language ("zh" and friends are valid BCP 47 tags as they are).
export function formatDate(value) {
  if (!value) return t("value-never");
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return t("value-none");
  return new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" }).format(date);
}
