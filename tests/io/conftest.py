"""The io tests use the session fixture ``robots_dir`` (example-robot-data's robots folder), defined for the
whole suite in tests/conftest.py."""
