// "Show code" in the playground: the request just run, as curl, OpenAI Python and Anthropic
// Python, against this gateway's real base URL; the key comes from an environment variable.
//   run = { model, messages: [{role, content}], temperature, max_tokens }   (null: not sent)

export const KEY_VARIABLE = "AIPLANE_API_KEY";
// Anthropic's Messages API requires max_tokens; the playground may have sent none.
const ANTHROPIC_DEFAULT_MAX_TOKENS = 1024;

export function baseUrl() {
  return `${window.location.origin}/v1`;
}

// A JSON string is a valid Python string literal too (the same escapes), and reads the same.
const py = (value) => JSON.stringify(value);

function shellQuote(text) {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function chatBody(run) {
  const body = { model: run.model, messages: run.messages };
  if (run.temperature !== null) body.temperature = run.temperature;
  if (run.max_tokens !== null) body.max_tokens = run.max_tokens;
  body.stream = true;
  return body;
}

export function curlSnippet(run) {
  return [
    `curl -N ${baseUrl()}/chat/completions \\`,
    `  -H "Authorization: Bearer $${KEY_VARIABLE}" \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d ${shellQuote(JSON.stringify(chatBody(run), null, 2))}`,
  ].join("\n");
}

function pyMessages(messages, indent) {
  const pad = " ".repeat(indent);
  const lines = messages.map((m) => `${pad}    {"role": ${py(m.role)}, "content": ${py(m.content)}},`);
  return ["[", ...lines, `${pad}]`].join("\n");
}

export function openaiSnippet(run) {
  const args = [`    model=${py(run.model)},`, `    messages=${pyMessages(run.messages, 4)},`];
  if (run.temperature !== null) args.push(`    temperature=${run.temperature},`);
  if (run.max_tokens !== null) args.push(`    max_tokens=${run.max_tokens},`);
  args.push("    stream=True,");
  return [
    "import os",
    "",
    "from openai import OpenAI",
    "",
    `client = OpenAI(base_url=${py(baseUrl())}, api_key=os.environ[${py(KEY_VARIABLE)}])`,
    "stream = client.chat.completions.create(",
    ...args,
    ")",
    "for chunk in stream:",
    "    if chunk.choices:",
    '        print(chunk.choices[0].delta.content or "", end="", flush=True)',
    "print()",
  ].join("\n");
}

export function anthropicSnippet(run) {
  const system = run.messages.filter((m) => m.role === "system").map((m) => m.content);
  const turns = run.messages.filter((m) => m.role !== "system");
  const args = [
    `    model=${py(run.model)},`,
    `    max_tokens=${run.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS},`,
  ];
  if (system.length) args.push(`    system=${py(system.join("\n\n"))},`);
  args.push(`    messages=${pyMessages(turns, 4)},`);
  // Recent Anthropic SDKs take no temperature argument; the request body still carries one.
  if (run.temperature !== null) args.push(`    extra_body={"temperature": ${run.temperature}},`);
  return [
    "import os",
    "",
    "import anthropic",
    "",
    // The SDK adds /v1/messages to the base URL itself.
    `client = anthropic.Anthropic(base_url=${py(window.location.origin)}, api_key=os.environ[${py(KEY_VARIABLE)}])`,
    "with client.messages.stream(",
    ...args,
    ") as stream:",
    "    for text in stream.text_stream:",
    '        print(text, end="", flush=True)',
    "print()",
  ].join("\n");
}

export const SNIPPETS = { curl: curlSnippet, openai: openaiSnippet, anthropic: anthropicSnippet };
