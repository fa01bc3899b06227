//! Plain text: paragraphs separated by blank lines.

use rag_core::{Block, BlockType, ParseError, ParsedDocument, RequestContext, SourceBytes};

use super::{content_start, decode, paragraph_ranges, parsed_text};

builtin_parser! {
    /// Reads plain text (`.txt`, `.text`): each run of non-blank lines is a paragraph block.
    ///
    /// A line holding only whitespace counts as blank, and `\n`, `\r\n` and a lone `\r` all end a line,
    /// so files from any platform split the same way; the line endings themselves stay in the text.
    ///
    /// ```
    /// use rag_chunker::parse::PlainTextParser;
    /// use rag_core::{CorpusId, DocumentId, Parser, RequestContext, SourceBytes};
    ///
    /// let (id, corpus) = (DocumentId::from("n"), CorpusId::from("c"));
    /// let bytes = b"First line\r\nsame paragraph\r\n  \r\nSecond paragraph";
    /// let parsed = PlainTextParser.parse(&RequestContext::local("t"),
    ///     SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "n.txt", bytes })?;
    /// assert_eq!(parsed.blocks.len(), 2);
    /// assert_eq!(parsed.block_text(&parsed.blocks[0]), Some("First line\r\nsame paragraph"));
    /// # Ok::<(), rag_core::ParseError>(())
    /// ```
    PlainTextParser("text") => parse_text
}

fn parse_text(_ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
    Ok(parsed_text(&source, decode(&source)?, text_blocks))
}

/// The paragraph blocks of plain text.
pub(crate) fn text_blocks(text: &str) -> Vec<Block> {
    paragraph_ranges(text, content_start(text)..text.len())
        .into_iter()
        .map(|r| Block::new(BlockType::Paragraph, r.into()))
        .collect()
}
