// Connection details for a new token: the gateway's base URL and ready examples for curl, the
// openai and anthropic SDKs, Claude Code and Codex CLI (README "Connecting agents").
import { t } from "./i18n.js";
import { h } from "./ui.js";

// The session cookie authenticates /v1 when this header is present (see playground.js).
const SESSION_HEADERS = { "X-AIplane-Session": "1" };

// The base URL programs use: this page's origin, which is the gateway the person signed in to.
export function baseUrl() {
  return location.origin;
}

// Example programs by kind; `base` has no trailing slash.
const EXAMPLES = {
  curl: ({ base, key, model }) =>
    [
      `curl ${base}/v1/chat/completions \\`,
      `  -H "Authorization: Bearer ${key}" \\`,
      `  -H "Content-Type: application/json" \\`,
      `  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`,
    ].join("\n"),
  openai: ({ base, key, model }) =>
    [
      "from openai import OpenAI",
      "",
      `client = OpenAI(base_url="${base}/v1", api_key="${key}")`,
      "reply = client.chat.completions.create(",
      `    model="${model}", messages=[{"role": "user", "content": "Hello"}]`,
      ")",
      "print(reply.choices[0].message.content)",
    ].join("\n"),
  anthropic: ({ base, key, model }) =>
    [
      "import anthropic",
      "",
      `client = anthropic.Anthropic(base_url="${base}", api_key="${key}")`,
      "message = client.messages.create(",
      `    model="${model}", max_tokens=256, messages=[{"role": "user", "content": "Hello"}]`,
      ")",
      "print(message.content[0].text)",
    ].join("\n"),
  claude: ({ base, key, model }) =>
    [
      `export ANTHROPIC_BASE_URL=${base}`,
      `export ANTHROPIC_API_KEY=${key}`,
      `export ANTHROPIC_MODEL=${model} ANTHROPIC_SMALL_FAST_MODEL=${model}`,
      "claude",
    ].join("\n"),
  codex: ({ base, key, model }) =>
    [
      `# export AIPLANE_API_KEY=${key}`,
      `model = "${model}"`,
      `model_provider = "aiplane"`,
      "",
      "[model_providers.aiplane]",
      `name = "aiplane"`,
      `base_url = "${base}/v1"`,
      `env_key = "AIPLANE_API_KEY"`,
      `wire_api = "responses"`,
    ].join("\n"),
};

export const EXAMPLE_KINDS = Object.keys(EXAMPLES);

export function example(kind, details) {
  return EXAMPLES[kind](details);
}

// The models this person may call through the gateway, as /v1/models lists them.
export async function callableModels() {
  const response = await fetch("/v1/models", {
    credentials: "same-origin",
    headers: { Accept: "application/json", ...SESSION_HEADERS },
  });
  if (!response.ok) throw new Error(t("error-unknown"));
  const data = await response.json();
  return data.data.map((item) => item.id).sort();
}

export function exampleOptions(select) {
  select.replaceChildren(...EXAMPLE_KINDS.map((kind) => h("option", { value: kind }, t(`activityui-example-${kind}`))));
}
