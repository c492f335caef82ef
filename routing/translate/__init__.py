"""Translation between Anthropic Messages and OpenAI Chat: requests, responses, streams."""
