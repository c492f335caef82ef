"""Optional traces of worker tasks (contracts.tracing): one consumer span per task run, named after
the task, with its id, queue, retries and final state; log lines written while it runs carry its trace
id. Connected to Celery's signals by the Celery app (tokenway.celery); the provider is made when the worker starts and only if an OTLP
endpoint is configured, so a worker without one does nothing more per task than a dict lookup.

Prefork children inherit the provider: the SDK's batch processor restarts its export thread after
a fork.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contracts.tracing import ProcessTracer, TraceSettings

if TYPE_CHECKING:
    from opentelemetry.context import Token
    from opentelemetry.context.context import Context
    from opentelemetry.trace import Span


TRACES = ProcessTracer("tokenway-worker", "tokenway.tasks")
RUNNING: dict[str, tuple[Span, Token[Context]]] = {}  # by task id


def traces_install(*, settings: TraceSettings | None = None) -> bool:
    """Make the provider if traces are configured and none is made yet; True when tasks are traced."""
    return TRACES.tracer(settings) is not None


def traces_shutdown() -> None:
    """Export what is batched and stop tracing tasks."""
    TRACES.shutdown()


def on_task_prerun(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    tracer = TRACES.current
    if tracer is None or task_id is None:
        return
    from opentelemetry import context, trace

    request = getattr(task, "request", None)
    queue = ((getattr(request, "delivery_info", None) or {}).get("routing_key")) or ""
    span = tracer.start_span(
        str(getattr(task, "name", "task")), kind=trace.SpanKind.CONSUMER,
        attributes={"celery.task_name": str(getattr(task, "name", "")), "celery.task_id": task_id,
                    "celery.queue": str(queue), "celery.retries": int(getattr(request, "retries", 0) or 0)},
    )  # fmt: skip
    RUNNING[task_id] = (span, context.attach(trace.set_span_in_context(span)))


def on_task_postrun(task_id: str | None = None, state: str | None = None, **_: Any) -> None:
    entry = RUNNING.pop(task_id or "", None)
    if entry is None:
        return
    from opentelemetry import context
    from opentelemetry.trace import StatusCode

    span, token = entry
    span.set_attribute("celery.state", state or "UNKNOWN")
    if state == "FAILURE":
        span.set_status(StatusCode.ERROR)
    context.detach(token)
    span.end()


def on_worker_init(**_: Any) -> None:
    traces_install()


def on_worker_stop(**_: Any) -> None:
    traces_shutdown()
