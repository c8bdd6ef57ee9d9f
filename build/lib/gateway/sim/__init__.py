"""The simulated OpenAI-, Anthropic- and Responses-compatible engine (tests, demo, benchmarks).
Imports only gateway.sim and gateway.core."""
