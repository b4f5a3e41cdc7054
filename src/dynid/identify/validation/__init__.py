"""A result against recordings it was not identified on, and two results compared."""
