"""ragctl's Python package: the Rust engine behind the Python API of ``rag_core``, ``rag_chunker``
and ``rag_packer``.

Import those modules: :mod:`rag_core` (ids, request context, chunks, errors),
:mod:`rag_chunker` (parsers, ``HeadingAwareChunker``, token counters) and :mod:`rag_packer`
(``ContextPacker``, the primitives, ``Repacker``). Drop-ins for other frameworks are in
:mod:`ragctl.integrations`.
"""

from ragctl._native import __version__

__all__ = ["__version__"]
