// A learned limit (max_inflight "auto") in words, the same on the Backends, Models and Queue
// pages: the limit in force and why it is there, and the engine's gauges as last read. The
// server sends `capacity` as {limit, reason, mode, engine_running, engine_waiting,
// engine_kv_usage, metrics_error}, or null for a fixed limit (gateway/runtime/capacity.py).
import { t } from "./i18n.js";
import { h } from "./ui.js";
import { formatNumber, tOr } from "./widgets.js";

// "auto (1–256)": how an auto backend's limit is configured.
export function autoRangeText(floor, ceiling) {
  return t("capacity-auto-range", { floor, ceiling });
}

// "from the engine's metrics", "at ceiling", …: why the limit is where it is.
export function reasonText(reason) {
  return tOr(`capacity-reason-${reason}`, reason);
}

// "Learned limit 4, from the engine's metrics"
export function learnedText(capacity) {
  return t("capacity-learned", { limit: capacity.limit, reason: reasonText(capacity.reason) });
}

// "Engine: running 2, waiting 0, KV cache 37%", or that no reading was believed yet.
export function engineText(capacity) {
  const { engine_running: running, engine_waiting: waiting, engine_kv_usage: kv } = capacity;
  if (running === null && waiting === null) return t("capacity-engine-unread");
  return t("capacity-engine", {
    running: formatNumber(running),
    waiting: formatNumber(waiting),
    // A percentage's sign and its spacing are the language's ("37%", "37 %").
    kv: kv === null ? t("capacity-kv-unreported") : t("capacity-kv-percent", { percent: formatNumber(Math.round(kv * 100)) }),
  });
}

// The lines an auto backend shows under its in-flight meter; none for a fixed limit.
export function capacityLines(capacity) {
  if (!capacity) return [];
  return [
    h("span", { class: "hint capacity-learned", dataset: { reason: capacity.reason } }, learnedText(capacity)),
    h("span", { class: "hint capacity-engine" }, engineText(capacity)),
    capacity.metrics_error
      ? h("span", { class: "hint capacity-error" }, t("capacity-metrics-error", { error: capacity.metrics_error }))
      : null,
  ];
}
