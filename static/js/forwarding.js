// What a backend's priority mode means for the requests it receives, in the person's language.
// The same decision as gateway/engines/priority_forwarding.py (_auto, explain_mapping): a manual mapping always
// forwards; gateway-only never does; automatic only when detection proved SGLang schedules by
// priority and reported the direction.
import { t } from "./i18n.js";

// Product names read the same in every language.
const ENGINE_NAMES = { sglang: "SGLang", vllm: "vLLM", llamacpp: "llama.cpp", ollama: "Ollama" };
const SGLANG_PRIORITY_POLICIES = ["fcfs", "lof"];

export function engineName(kind) {
  if (ENGINE_NAMES[kind]) return ENGINE_NAMES[kind];
  return kind === "generic" ? t("engine-generic") : t("engine-unknown");
}

function isInt(value) {
  return Number.isInteger(value);
}

// -> { forwarded: boolean, text: string }
export function explainForwarding(priority, profile) {
  const mode = priority ? priority.mode : "auto";
  if (mode === "custom") {
    const m = priority.mapping || {};
    if (!m.field || !isInt(m.low) || !isInt(m.medium) || !isInt(m.high)) {
      return { forwarded: false, text: t("forwarding-custom-incomplete") };
    }
    return { forwarded: true, text: t("forwarding-custom", { field: m.field, low: m.low, medium: m.medium, high: m.high }) };
  }
  if (mode === "gateway") return { forwarded: false, text: t("forwarding-gateway") };

  if (!profile || !profile.kind || profile.kind === "unknown") {
    return { forwarded: false, text: t("forwarding-auto-unidentified") };
  }
  if (profile.kind === "vllm") return { forwarded: false, text: t("forwarding-auto-vllm") };
  if (profile.kind !== "sglang") {
    return { forwarded: false, text: t("forwarding-auto-unsupported", { engine: engineName(profile.kind) }) };
  }
  if (profile.priority_scheduling === null || profile.priority_scheduling === undefined) {
    return { forwarded: false, text: t("forwarding-sglang-flag-unreported") };
  }
  if (!profile.priority_scheduling) return { forwarded: false, text: t("forwarding-sglang-flag-off") };
  if (!profile.schedule_policy) return { forwarded: false, text: t("forwarding-sglang-policy-unreported") };
  if (!SGLANG_PRIORITY_POLICIES.includes(profile.schedule_policy)) {
    return { forwarded: false, text: t("forwarding-sglang-policy-ignored", { policy: profile.schedule_policy }) };
  }
  if (profile.low_values_first === null || profile.low_values_first === undefined) {
    return { forwarded: false, text: t("forwarding-sglang-direction-unreported") };
  }
  return profile.low_values_first
    ? { forwarded: true, text: t("forwarding-sglang-smaller-first") }
    : { forwarded: true, text: t("forwarding-sglang-larger-first") };
}
