// Administration → Queue: the live admission queue over /ws/queue (polling every 2 s when the
// websocket fails): depth per class, every waiter in dispatch order per line of backends with
// its place, class, score (serial), age (ticking) and estimated wait, per backend the
// requests in flight against its capacity (for an auto backend its learned limit, why, and the
// engine's gauges) and its health, and the last dispatches, newest first.
// The server sends a picture only when something changes: ages tick here, between pictures.
import { lang, t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { watchQueue } from "./live.js";
import { capacityLines } from "./capacity.js";
import {
  $,
  badge,
  cell,
  formatEstimate,
  formatInstant,
  formatMs,
  formatSeconds,
  liveEndedText,
  liveModeText,
  priorityName,
} from "./widgets.js";

const CLASSES = ["high", "medium", "low"];
const pageAlert = $("page-alert");
const liveState = $("live-state");

let receivedAt = performance.now();
let waiters = [];

function ageCell(waiter) {
  return cell(t("queue-age"), h("span", { class: "age", dataset: { age: String(waiter.age_secs) } }, formatSeconds(waiter.age_secs)));
}

// The server's estimate as it was sent: it does not count down here, since a slot may free sooner
// or later than the pace says; the next picture brings a new one.
function estimateCell(waiter) {
  const secs = waiter.estimated_wait_secs;
  return cell(
    t("queue-estimate"),
    h("span", { class: "estimate", dataset: { secs: secs === null || secs === undefined ? "" : String(secs) } }, formatEstimate(secs)),
  );
}

// How long ago a dispatch happened ("at" is the server's unix time), never below zero.
function agoText(at) {
  return t("queue-recent-ago", { duration: formatSeconds(Date.now() / 1000 - at) });
}

// Ages tick between pictures: the age the server sent plus the time since it arrived.
function tick() {
  const since = (performance.now() - receivedAt) / 1000;
  for (const span of document.querySelectorAll("#waiters-table .age")) {
    span.textContent = formatSeconds(Number(span.dataset.age) + since);
  }
  for (const span of document.querySelectorAll("#recent-body .ago")) {
    span.textContent = agoText(Number(span.dataset.at));
  }
}
setInterval(tick, 1000);

// One <tbody> per line of backends, its waiters in the order its next free slots go to them:
// a heading row names the backends, each row its place, class, score (serial), age and estimate.
function renderWaiters(lines, scheduler) {
  const table = $("waiters-table");
  const scored = scheduler === "serial";
  $("waiters-score-col").hidden = !scored;
  for (const old of table.querySelectorAll("tbody")) old.remove();
  const columns = scored ? 9 : 8;
  for (const line of lines) {
    const mine = waiters.filter((waiter) => waiter.line === line.id);
    if (mine.length === 0) continue;
    table.append(
      h(
        "tbody",
        { class: "queue-line", dataset: { line: line.id } },
        h(
          "tr",
          { class: "line-head" },
          h(
            "th",
            { scope: "rowgroup", colspan: String(columns) },
            t("queue-line-heading", { backends: line.backends.join(", "), count: mine.length }),
          ),
        ),
        ...mine.map((waiter) =>
          h(
            "tr",
            { dataset: { waiter: String(waiter.id), position: String(waiter.position) } },
            h("th", { scope: "row", class: "num", "data-label": t("queue-position") }, t("queue-position-value", { position: waiter.position })),
            cell(t("queue-class"), badge(`class-${waiter.class}`, priorityName(waiter.class))),
            scored ? cell(t("queue-score"), h("span", { class: "num score" }, waiter.score === null ? t("value-none") : waiter.score.toFixed(2))) : null,
            cell(t("queue-model"), h("code", {}, waiter.model || t("value-none"))),
            cell(t("queue-user"), waiter.user || t("value-none")),
            cell(t("queue-token"), waiter.token || t("queue-token-session")),
            cell(t("queue-waits-for"), h("span", { class: "waits-for" }, (waiter.waits_for || []).join(", ") || t("value-none"))),
            ageCell(waiter),
            estimateCell(waiter),
          ),
        ),
      ),
    );
  }
  $("waiters-empty").hidden = waiters.length > 0;
  $("waiters-wrap").hidden = waiters.length === 0;
}

function renderBackends(backends) {
  $("queue-backends-body").replaceChildren(
    ...backends.map((backend) => {
      const ratio = Math.min(1, backend.inflight / Math.max(1, backend.max_inflight));
      let health = backend.healthy ? badge("active", t("backend-healthy")) : badge("revoked", t("backend-unhealthy"));
      if (!backend.enabled) health = badge("warn", t("backend-disabled"));
      const meter = h(
        "span",
        { class: "inflight" },
        h("span", { class: "meter", "aria-hidden": "true" }, h("span", { style: { width: `${Math.round(ratio * 100)}%` } })),
        h("span", {}, t("backend-inflight-of", { inflight: backend.inflight, max: backend.max_inflight })),
      );
      return h(
        "tr",
        { dataset: { backend: backend.name } },
        h("th", { scope: "row", "data-label": t("queue-backend") }, backend.name),
        cell(t("backend-inflight"), backend.capacity ? h("div", { class: "capacity" }, meter, ...capacityLines(backend.capacity)) : meter),
        cell(t("queue-health"), health),
      );
    }),
  );
  $("queue-backends-empty").hidden = backends.length > 0;
  $("queue-backends-wrap").hidden = backends.length === 0;
}

const clockTime = new Intl.DateTimeFormat(lang, { timeStyle: "medium" });

// The clock time of a dispatch today, the date too when it was earlier; the full moment on hover.
function dispatchTime(at) {
  const date = new Date(at * 1000);
  const today = date.toDateString() === new Date().toDateString();
  return h(
    "time",
    { datetime: date.toISOString(), title: formatInstant(date) },
    today ? clockTime.format(date) : formatInstant(date),
  );
}

function renderRecent(recent) {
  $("recent-body").replaceChildren(
    ...recent.map((dispatch) =>
      h(
        "tr",
        { dataset: { at: String(dispatch.at) } },
        cell(
          t("queue-recent-time"),
          h(
            "span",
            {},
            h("span", { class: "row-title" }, dispatchTime(dispatch.at)),
            h("span", { class: "row-sub ago", dataset: { at: String(dispatch.at) } }, agoText(dispatch.at)),
          ),
        ),
        cell(t("queue-class"), badge(`class-${dispatch.class}`, priorityName(dispatch.class))),
        cell(t("queue-model"), dispatch.model ? h("code", {}, dispatch.model) : t("value-none")),
        cell(t("queue-user"), dispatch.user || t("value-none")),
        cell(t("queue-backend"), dispatch.backend || t("value-none")),
        cell(t("queue-recent-waited"), h("span", { class: "num" }, formatMs(dispatch.waited_secs * 1000))),
      ),
    ),
  );
  $("recent-empty").hidden = recent.length > 0;
  $("recent-wrap").hidden = recent.length === 0;
}

function render(state) {
  receivedAt = performance.now();
  clearMessage(pageAlert);
  $("queue-priority-off").hidden = Boolean(state.priority_enabled);
  for (const cls of CLASSES) $(`depth-${cls}`).textContent = String(state.depth ? state.depth[cls] ?? 0 : 0);
  waiters = state.waiters || [];
  renderWaiters(state.lines || [], state.scheduler);
  renderBackends(state.backends || []);
  renderRecent(state.recent || []);
}

// The right to watch is gone: say why, and take away what it showed (users, models).
function ended(why) {
  for (const section of document.querySelectorAll(".page-section")) section.hidden = true;
  $("queue-priority-off").hidden = true;
  showError(pageAlert, why);
}

let lastMode = "connecting";
watchQueue(render, (mode, error) => {
  if (mode === "offline" && error && lastMode !== "offline") showError(pageAlert, error.message);
  const why = liveEndedText(mode);
  if (why && mode !== lastMode) ended(why);
  if (mode === lastMode) return;
  lastMode = mode;
  liveState.dataset.mode = mode;
  liveState.textContent = liveModeText(mode);
});
