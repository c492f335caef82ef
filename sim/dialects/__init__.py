"""Wire dialects: request parsing/validation and response rendering, one module per dialect."""
