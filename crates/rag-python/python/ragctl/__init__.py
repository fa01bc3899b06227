"""ragctl's Python package: the Rust engine behind the seeds' Python API.

Import the seeds' modules: :mod:`rag_core` (ids, request context, chunks, errors),
:mod:`rag_chunker` (parsers, ``HeadingAwareChunker``, token counters) and :mod:`rag_packer`
(``ContextPacker``, the primitives, ``Repacker``). Drop-ins for other frameworks are in
:mod:`ragctl.integrations`.
"""

from ragctl._native import __version__

__all__ = ["__version__"]
