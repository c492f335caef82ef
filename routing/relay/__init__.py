"""Relaying one opened upstream answer to the caller, in the caller's dialect (routing.translate)."""
