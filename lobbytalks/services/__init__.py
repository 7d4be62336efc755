"""The domain, framework-free: each function takes the database, the actor and validated input.

The database comes in one of two forms: a function that only reads takes a ``db.Connection``
(callers pass ``runtime().db.conn``, or the ``conn`` of a transaction they hold), and a
function that writes takes the ``db.Database`` and opens its own ``transaction()``.
"""
