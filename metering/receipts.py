"""Email receipts for succeeded top-ups, to the tenant's billing members and owners (Django's mail backend;
the console backend in development)."""

from __future__ import annotations

import logging
import smtplib

from django.core.mail import send_mail

from tenants.models import Membership, Role

logger = logging.getLogger(__name__)

RECEIPT_ROLES = (Role.OWNER, Role.BILLING)


def receipt_recipients(*, tenant_id: int) -> list[str]:
    members = Membership.objects.filter(tenant_id=tenant_id, role__in=RECEIPT_ROLES).select_related("user")
    return sorted({m.user.email for m in members if m.user.email})


def topup_receipt_send(*, tenant_id: int, tenant_name: str, payment_intent_id: str, amount_micros: int) -> int:
    """Send the receipt of one credited top-up; returns how many messages the backend accepted (0 on failure,
    logged: a lost receipt never undoes the credit, and the console lists the top-up)."""
    recipients = receipt_recipients(tenant_id=tenant_id)
    if not recipients:
        return 0
    amount = f"${amount_micros / 1_000_000:,.2f}"
    body = (
        f"Thank you. {amount} was added to the prepaid balance of {tenant_name}.\n\n"
        f"Payment reference: {payment_intent_id}\n"
    )
    try:
        return send_mail(f"Tokenway receipt: {amount} top-up", body, None, recipients)
    except (smtplib.SMTPException, OSError):
        logger.exception("receipt for %s not sent", payment_intent_id)
        return 0
