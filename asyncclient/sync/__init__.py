"""The synchronous face: :class:`Client` and the twins of jobs, pagers and batches.

Each call runs the async client's own method in an event loop of the client's own (see
``asyncclient.sync.client``); nothing here is a second implementation.
"""

# Owns: the loop thread, the blocking twins and the namespaces' sync methods (declared from
# the async ones). May import: the facade (``client``) and what its methods take and return
# (``awaiting``, ``batch``, ``resources``, ``webhooks``, ``http``, ``ratelimit``, ``retry``)
# and the
# shared core. Nothing but the package's ``__init__`` imports it.

from asyncclient.sync.batch import SyncBatch
from asyncclient.sync.client import Client
from asyncclient.sync.jobs import SyncVideoJob
from asyncclient.sync.pager import SyncPager

__all__ = ["Client", "SyncBatch", "SyncPager", "SyncVideoJob"]
