"""Plumbing every app shares, with no models of its own: ids from request input (`ids`), the
404 helper of pages (`shortcuts`), CSV cells a spreadsheet will not run (`csv_cells`), and the
Celery router (`routing`)."""
