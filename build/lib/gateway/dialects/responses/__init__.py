"""OpenAI's Responses API: validated, translated to and from chat completions, streamed, or passed
through."""
