"""The base every app builds on: the Redis clients, the environment reader, the management API's error
shape and parser, health check and metrics plumbing, worker heartbeats, task and web traces.

At the bottom of the layers: it imports only ``contracts`` (and Django, DRF, Celery, Redis), never an app
or the project package. A plain package, not a Django app: it has no models, templates or commands.
"""
