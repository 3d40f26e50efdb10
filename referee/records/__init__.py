"""Game records (docs/records.md): the `.abluxx` file format, building, reading, verifying and replaying.

See docs/records.md. The match runner writes a record with ``RecordWriter``, ``header``, ``decision_record_bytes``
(the fast form of ``decision_record``) and ``footer``; ``read_record`` reads one back, and ``verify_record``
re-runs it with the engine.
"""

from .build import (
    CHOOSER_PB,
    FAULT_NAME,
    FAULT_PB,
    FAULT_WORDS,
    commitment,
    decision_record,
    decision_record_bytes,
    final_places,
    footer,
    header,
    new_salt,
    record_selfplay,
    withhold_deal,
)
from .paths import DEFAULT_DATA_DIR, record_path, resolve_record
from .recordfile import (
    FORMAT_VERSION,
    MAGIC,
    RecordError,
    RecordWriter,
    Scan,
    encode_frame,
    read_record,
    record_bytes,
    scan_record,
)
from .verify import DealNotRevealed, Step, VerifyError, check_footer, replay, start_state, verify_record

__all__ = [
    "CHOOSER_PB", "DEFAULT_DATA_DIR", "DealNotRevealed", "FAULT_NAME", "FAULT_PB", "FAULT_WORDS", "FORMAT_VERSION",
    "MAGIC", "RecordError",
    "RecordWriter", "Scan", "Step", "VerifyError", "check_footer", "commitment", "decision_record",
    "decision_record_bytes", "encode_frame",
    "final_places", "footer", "header", "new_salt", "read_record", "record_bytes", "record_path",
    "record_selfplay", "replay", "resolve_record", "scan_record", "start_state", "verify_record", "withhold_deal",
]  # fmt: skip
