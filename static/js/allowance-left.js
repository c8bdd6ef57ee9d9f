// The Tokens page's "What is left of your allowance": GET /api/v0/usage's `allowance`, a table per
// set of limits (the person's, then each token's own) with a bar of what is used or held.
import { lang, t } from "./i18n.js";
import { h } from "./ui.js";
import { cell } from "./widgets.js";
import { describeLimits } from "./allowances.js";
import { formatCount } from "./charts.js";

const resetTime = new Intl.DateTimeFormat(lang, { timeStyle: "short" });
const resetDay = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" });

function resets(limit) {
  const at = new Date(limit.resets_at);
  return (limit.window === "minute" ? resetTime : resetDay).format(at);
}

function usedCell(limit) {
  if (limit.used === null) return cell(t("my-allowance-used"), t("my-allowance-unknown"));
  const taken = limit.used + limit.reserved;
  const ratio = limit.limit > 0 ? Math.min(1, taken / limit.limit) : 1;
  return cell(
    t("my-allowance-used"),
    h(
      "span",
      { class: "allowance-used" },
      h("span", {}, t("my-allowance-of", { used: formatCount(limit.used), limit: formatCount(limit.limit) })),
      h("span", { class: "meter", "aria-hidden": "true" }, h("span", { style: { width: `${Math.round(ratio * 100)}%` } })),
      limit.reserved > 0 ? h("span", { class: "hint" }, t("my-allowance-held", { amount: formatCount(limit.reserved) })) : null,
    ),
  );
}

function limitsTable(caption, limits) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data-table compact allowance-left" },
      h("caption", {}, caption),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["my-allowance-limit", "my-allowance-used", "my-allowance-remaining", "my-allowance-resets"].map((id) =>
            h("th", { scope: "col" }, t(id)),
          ),
        ),
      ),
      h(
        "tbody",
        {},
        ...limits.map((limit) =>
          h(
            "tr",
            { class: limit.remaining === 0 ? "is-exhausted" : null },
            h("th", { scope: "row" }, describeLimits([limit])),
            usedCell(limit),
            cell(t("my-allowance-remaining"), limit.remaining === null ? t("my-allowance-unknown") : formatCount(limit.remaining)),
            cell(t("my-allowance-resets"), h("time", { datetime: limit.resets_at }, resets(limit))),
          ),
        ),
      ),
    ),
  );
}

export function renderAllowance(box, allowance) {
  box.hidden = !allowance;
  if (!allowance) return;
  const parts = [h("h3", { id: "my-allowance-title" }, t("my-allowance-title")), h("p", { class: "hint" }, t("my-allowance-intro"))];
  if (allowance.person.length) parts.push(limitsTable(t("my-allowance-mine"), allowance.person));
  else parts.push(h("p", { class: "allowance-unlimited" }, t("my-allowance-unlimited")));
  for (const token of allowance.tokens) {
    parts.push(limitsTable(t("my-allowance-token", { name: token.token_name }), token.limits));
  }
  box.replaceChildren(...parts);
}
