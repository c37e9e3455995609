"""ingest: jobs that bring external knowledge (ConceptNet) into a store. Imports only graphstore.

Every job is resumable (a checkpoint is committed with each batch) and idempotent
(assertions are merged by key), and keeps provenance on every assertion.
"""

from .conceptnet import Assertion, IngestError, all_assertions, read_checkpoint

__all__ = ["Assertion", "IngestError", "all_assertions", "read_checkpoint"]
