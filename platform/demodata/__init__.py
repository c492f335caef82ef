"""The demo tenant, users, key and credit (``python manage.py seed_demo``): uses every app, so it sits above
them all rather than inside one of them."""
