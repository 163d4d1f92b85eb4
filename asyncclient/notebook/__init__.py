"""Notebook displays: a face a person touches.

Owns: the text and HTML views of jobs and batches (``display``) and their live
updates through IPython display ids (``live``). It attaches from outside, through what
jobs and batches offer everyone (their updates and subscriptions), and reaches them
through small protocols; IPython stays optional.

May import: ``awaiting.state``, ``models``, ``errors``, ``_states``. Nothing under
``awaiting/`` or ``batch/`` imports it.
"""
