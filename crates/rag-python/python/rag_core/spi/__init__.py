"""The service-provider interfaces: what a chunker implemented in Python promises."""

from rag_core.spi.chunker import Chunker

__all__ = ["Chunker"]
