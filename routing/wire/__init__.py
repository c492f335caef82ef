"""Wire formats the gateway speaks with callers and providers: OpenAI Chat and Anthropic Messages."""
