"""One frame on a worker process's pipes: a 4-byte big-endian length, then a pickle (the two ends are one
program, and the coordinator started the worker)."""

from __future__ import annotations

import asyncio
import pickle
import struct
from typing import Any

_LENGTH = struct.Struct(">I")


def frame(message: object) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """The next message, or None at the end of the stream (the other side closed it or died)."""
    try:
        head = await reader.readexactly(_LENGTH.size)
        return pickle.loads(await reader.readexactly(_LENGTH.unpack(head)[0]))
    except asyncio.IncompleteReadError:
        return None
