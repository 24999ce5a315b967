"""The durable approval queue for memory and skill writes (``home.approvals``)."""

from .queue import ApprovalQueue
from .records import PendingRecord, RecordProblem

__all__ = ["ApprovalQueue", "PendingRecord", "RecordProblem"]
