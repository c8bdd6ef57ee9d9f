// The Tokens page's "My usage" panel: the person's own requests and tokens over a chosen range
// from GET /api/v0/usage (which only ever answers their own), by token, with a CSV download.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { $, cell } from "./widgets.js";
import { formatCount, timeChart } from "./charts.js";
import { bucketFor, rangeStart } from "./usage-query.js";
import { renderAllowance } from "./allowance-left.js";

const range = $("my-usage-range");
const alertRegion = $("my-usage-alert");

function tokenLabel(row) {
  return row.token_id === null ? t("activity-browser") : t("usage-token-label", { name: row.token_name, id: row.token_id });
}

function refusalCount(row) {
  return Object.values(row.refusals).reduce((sum, n) => sum + n, 0);
}

function render(body) {
  const totals = body.totals;
  $("my-usage-totals").replaceChildren(
    ...[
      ["usage-requests", totals.requests],
      ["usage-input-tokens", totals.input_tokens],
      ["usage-output-tokens", totals.output_tokens],
      ["usage-refusals", refusalCount(totals)],
    ].map(([id, value]) => h("li", {}, `${t(id)}: `, h("strong", {}, formatCount(value)))),
  );
  renderAllowance($("my-usage-allowance"), body.allowance);
  timeChart($("my-usage-chart"), {
    label: t("my-usage-chart"),
    bucket: body.bucket,
    times: body.buckets,
    series: [
      { label: t("usage-input-tokens"), values: body.bucket_totals.map((row) => row.input_tokens) },
      { label: t("usage-output-tokens"), values: body.bucket_totals.map((row) => row.output_tokens) },
    ],
  });
  $("my-usage-body").replaceChildren(
    ...body.results.map((row) =>
      h(
        "tr",
        {},
        h("th", { scope: "row" }, h("span", { class: "row-title" }, tokenLabel(row))),
        cell(t("usage-requests"), formatCount(row.requests)),
        cell(t("usage-input-tokens"), formatCount(row.input_tokens)),
        cell(t("usage-output-tokens"), formatCount(row.output_tokens)),
        cell(t("usage-refusals"), formatCount(refusalCount(row))),
      ),
    ),
  );
  $("my-usage-table-wrap").hidden = body.results.length === 0;
  $("my-usage-empty").hidden = body.results.length !== 0;
}

async function load() {
  clearMessage(alertRegion);
  const until = new Date();
  const params = new URLSearchParams({
    group_by: "token",
    bucket: bucketFor(range.value, "hour"),
    since: rangeStart(range.value, until).toISOString(),
    until: until.toISOString(),
  });
  $("my-usage-export").href = `/api/v0/usage?${params}&format=csv`;
  try {
    render(await api("GET", `/api/v0/usage?${params}`));
  } catch (error) {
    showError(alertRegion, error.message);
  }
}

range.addEventListener("change", load);
load();
