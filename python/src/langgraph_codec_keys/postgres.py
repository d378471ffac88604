"""Postgres savers that keep every channel value in ``checkpoint_blobs``.

Python's ``PostgresSaver.put`` keeps every ``None``/``str``/``int``/``float``/``bool``
channel value inline in the ``checkpoints.checkpoint`` JSONB, in clear, whatever the
serializer: an ``EncryptedSerializer`` never sees them. :class:`AllBlobsPostgresSaver`
(and :class:`AsyncAllBlobsPostgresSaver`) write those values as blobs too, through the
saver's serializer -- encrypted when it encrypts -- and leave the JSONB without channel
values (but for the ``true`` marker LangGraph itself writes for a delta snapshot).
This is what the Rust crate's ``PostgresSaver`` does with ``all_values_in_blobs(true)``.

The rows are the layout stock savers read: a stock ``PostgresSaver`` reads a channel's
value from its blob of the checkpoint's channel version when the JSONB has none, so
stock readers (and writers: a thread may go back and forth) need no change. Needs
``langgraph-checkpoint-postgres`` (3.x).

>>> from langgraph_codec_keys import encrypted_serializer
>>> from langgraph_codec_keys.postgres import AllBlobsPostgresSaver
>>> with AllBlobsPostgresSaver.from_conn_string(DB_URI) as saver:  # doctest: +SKIP
...     saver.serde = encrypted_serializer()
...     saver.setup()
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langchain_core.runnables import RunnableConfig

__all__ = ["AllBlobsPostgresSaver", "AsyncAllBlobsPostgresSaver"]


class _Blob:
    """A primitive channel value on its way to a blob: not a ``str``/``int``/... to
    ``put``'s inline test, unwrapped again before the serializer sees it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _inline(value: Any) -> bool:
    # put()'s own test for what it keeps inline.
    return value is None or isinstance(value, (str, int, float, bool))


def _to_blobs(
    checkpoint: Checkpoint, new_versions: ChannelVersions
) -> tuple[Checkpoint, ChannelVersions]:
    """The checkpoint with every primitive channel value wrapped (so ``put`` sends it to
    the blobs), and the versions to write blobs for: the new ones, and the current
    version of every wrapped channel -- a value a stock writer kept inline earlier in
    the thread has no blob yet (``ON CONFLICT DO NOTHING`` keeps an existing one,
    which holds the same value: a channel version names one value)."""
    versions = checkpoint["channel_versions"]
    values = {
        k: _Blob(v) if _inline(v) and k in versions else v
        for k, v in checkpoint["channel_values"].items()
    }
    wrapped = {k: versions[k] for k, v in values.items() if isinstance(v, _Blob)}
    # A channel value without a version cannot be a blob (readers find blobs by
    # version): it stays inline, as stock put leaves it.
    return {**checkpoint, "channel_values": values}, {**wrapped, **new_versions}


class _AllBlobs:
    def _dump_blobs(
        self,
        thread_id: str,
        checkpoint_ns: str,
        values: dict[str, Any],
        versions: ChannelVersions,
    ) -> list[tuple[str, str, str, str, str, bytes | None]]:
        unwrapped = {k: v.value if isinstance(v, _Blob) else v for k, v in values.items()}
        return super()._dump_blobs(thread_id, checkpoint_ns, unwrapped, versions)


class AllBlobsPostgresSaver(_AllBlobs, PostgresSaver):
    """``PostgresSaver`` that writes every channel value as a blob (see the module)."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        checkpoint, new_versions = _to_blobs(checkpoint, new_versions)
        return super().put(config, checkpoint, metadata, new_versions)


class AsyncAllBlobsPostgresSaver(_AllBlobs, AsyncPostgresSaver):
    """``AsyncPostgresSaver`` that writes every channel value as a blob (see the module)."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        checkpoint, new_versions = _to_blobs(checkpoint, new_versions)
        return await super().aput(config, checkpoint, metadata, new_versions)
