"""Anthropic's Messages API: validated, translated to and from chat completions, streamed, or
passed through."""
