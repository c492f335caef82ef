"""The way out to providers: the one outbound HTTP client, tenants' own (BYOK) sessions, one attempt up to
its first byte and the classification of its failure, and the buffered reads of an upstream body."""
