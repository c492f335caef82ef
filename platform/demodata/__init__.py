"""The demo tenant, users and key (``python manage.py seed_demo``): uses every platform app, so it sits above
them all rather than inside one of them. Its credit is metering's (``python manage.py demo_credit``)."""
