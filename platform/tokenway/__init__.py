"""Tokenway Django project package (settings, urls, asgi, celery app)."""
