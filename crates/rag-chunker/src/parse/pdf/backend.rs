//! Reading the file: lopdf parses it (cross-reference repair, object streams, decryption with the
//! empty password, filters, with its decompression and nesting bounds), and the interpreter
//! ([`interpreter`](super::interpreter)) runs each page's content streams into positioned text
//! runs, within the work the file may cost ([`Budget`]). What the reader repaired, skipped or
//! left out is noted in a [`Report`].

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};
use rag_core::ParseError;

use super::PdfLimits;
use super::fonts::{Font, deref, number};
use super::graphics::Matrix;
use super::interpreter::{Interpreter, PageContext};
use super::layout::PageText;
use super::malformed;
use super::report::Report;

/// What the reader makes of a file: the text of every page, in page order, and the report.
pub(super) struct ReadDocument {
    pub(super) pages: Vec<PageText>,
    pub(super) report: Report,
}

/// The text of every page, in page order, within `limits`; hidden text is kept when
/// `keep_hidden`.
///
/// lopdf is a parser of untrusted input that is fuzzed and bounds what it decompresses and how
/// deep it nests, but it is not ours: a panic in it is caught here and reported as a damaged file
/// rather than taking the process down.
pub(super) fn read_pages(
    bytes: &[u8],
    uri: &str,
    limits: PdfLimits,
    keep_hidden: bool,
) -> Result<ReadDocument, ParseError> {
    let header_at = bytes.windows(5).take(1024).position(|w| w == b"%PDF-");
    if header_at.is_none() {
        return Err(malformed(
            uri,
            "is not a PDF (no `%PDF-` header in its first 1024 bytes)".to_owned(),
        ));
    }
    match catch_unwind(AssertUnwindSafe(|| read_document(bytes, uri, limits, keep_hidden))) {
        Ok(result) => result,
        Err(_) => Err(malformed(
            uri,
            "is damaged: the PDF reader failed on it; repair it (e.g. `qpdf in.pdf repaired.pdf`) or export it again"
                .to_owned(),
        )),
    }
}

fn read_document(bytes: &[u8], uri: &str, limits: PdfLimits, keep_hidden: bool) -> Result<ReadDocument, ParseError> {
    let options = LoadOptions {
        // An encrypted file that opens without a password (only its permissions are protected)
        // is read as any other.
        password: Some(String::new()),
        max_decompressed_size: Some(limits.max_stream_bytes),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(bytes, options).map_err(|err| load_error(uri, &err, limits))?;
    let pages = doc.get_pages();
    if pages.len() > limits.max_pages {
        return Err(ParseError::LimitExceeded {
            source_uri: uri.to_owned(),
            what: format!("the number of pages ({})", pages.len()),
            limit: format!("{} pages", limits.max_pages),
        });
    }
    if pages.is_empty() {
        return Err(malformed(
            uri,
            "has no pages: the file is damaged or truncated; repair it (e.g. `qpdf in.pdf repaired.pdf`) or export it again"
                .to_owned(),
        ));
    }
    let mut report = Report::default();
    report.repaired = doc.xref_recovery;
    let mut text_bytes = 0usize;
    let mut out = Vec::with_capacity(pages.len());
    let mut fonts = FontCache::default();
    let mut budget = Budget::new(limits);
    let mut contents = ContentCache::default();
    for (&number, &page_id) in &pages {
        let page = Page {
            doc: &doc,
            uri,
            number,
            id: page_id,
            limits,
            keep_hidden,
        };
        let page = read_page(&page, &mut fonts, &mut budget, &mut contents, &mut report)?;
        text_bytes += page.runs.iter().map(|r| r.text.len()).sum::<usize>();
        if text_bytes > limits.max_text_bytes {
            return Err(ParseError::LimitExceeded {
                source_uri: uri.to_owned(),
                what: format!("the text of pages 1 to {number}"),
                limit: format!("{} MiB", limits.max_text_bytes >> 20),
            });
        }
        out.push(page);
    }
    Ok(ReadDocument { pages: out, report })
}

fn load_error(uri: &str, err: &lopdf::Error, limits: PdfLimits) -> ParseError {
    match err {
        lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_) => malformed(
            uri,
            format!(
                "is encrypted and does not open without a password ({err}): decrypt it \
                 (`qpdf --decrypt --password=PASSWORD in.pdf decrypted.pdf`) and chunk the decrypted file"
            ),
        ),
        lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => ParseError::LimitExceeded {
            source_uri: uri.to_owned(),
            what: "the decompressed size of a stream".to_owned(),
            limit: format!("{} MiB", limits.max_stream_bytes >> 20),
        },
        _ => malformed(
            uri,
            format!("is damaged or truncated ({err}): repair it (e.g. `qpdf in.pdf repaired.pdf`) or export it again"),
        ),
    }
}

/// The work a file may cost, all pages together ([`PdfLimits::max_operations`],
/// [`PdfLimits::max_content_bytes`]): a content stream that several pages share, or a form
/// drawn many times, counts each time it runs, so a small file cannot make the reader run for
/// hours.
pub(super) struct Budget {
    limits: PdfLimits,
    operations: usize,
    content_bytes: usize,
}

impl Budget {
    fn new(limits: PdfLimits) -> Self {
        Budget {
            limits,
            operations: 0,
            content_bytes: 0,
        }
    }

    /// Counts one operator run on page `page`.
    pub(super) fn count_operation(&mut self, uri: &str, page: u32) -> Result<(), ParseError> {
        self.operations += 1;
        if self.operations > self.limits.max_operations {
            return Err(ParseError::LimitExceeded {
                source_uri: uri.to_owned(),
                what: format!("the content operators of the file ({})", pages_up_to(page)),
                limit: format!("{} operators", self.limits.max_operations),
            });
        }
        Ok(())
    }

    /// Counts `bytes` of decompressed content (a page's streams, a form) about to run on `page`.
    pub(super) fn count_content(&mut self, uri: &str, page: u32, bytes: usize) -> Result<(), ParseError> {
        self.content_bytes = self.content_bytes.saturating_add(bytes);
        if self.content_bytes > self.limits.max_content_bytes {
            return Err(ParseError::LimitExceeded {
                source_uri: uri.to_owned(),
                what: format!("the content streams run for the file ({})", pages_up_to(page)),
                limit: format!("{} MiB", self.limits.max_content_bytes >> 20),
            });
        }
        Ok(())
    }
}

/// Fonts are read once per font object, whatever the number of pages that use them.
#[derive(Default)]
pub(super) struct FontCache {
    by_id: BTreeMap<ObjectId, Rc<Font>>,
}

impl FontCache {
    pub(super) fn font(&mut self, doc: &Document, object: &Object, limit: usize) -> Option<Rc<Font>> {
        match object {
            Object::Reference(id) => {
                if let Some(font) = self.by_id.get(id) {
                    return Some(Rc::clone(font));
                }
                let dict = doc.get_dictionary(*id).ok()?;
                let font = Rc::new(Font::from_dict(doc, dict, limit));
                self.by_id.insert(*id, Rc::clone(&font));
                Some(font)
            }
            Object::Dictionary(dict) => Some(Rc::new(Font::from_dict(doc, dict, limit))),
            _ => None,
        }
    }
}

/// The page's visible box (crop box, else media box, inherited through the page tree) and its
/// rotation, as the transform from user space to points from the displayed page's top-left
/// corner, with the displayed width and height.
fn page_frame(doc: &Document, page_id: ObjectId) -> (Matrix, f64, f64) {
    let inherited = |key: &[u8]| -> Option<&Object> {
        let mut node = doc.get_dictionary(page_id).ok()?;
        for _ in 0..32 {
            if let Ok(value) = node.get(key) {
                return deref(doc, Some(value));
            }
            node = deref(doc, node.get(b"Parent").ok())?.as_dict().ok()?;
        }
        None
    };
    let rect = |key: &[u8]| -> Option<[f64; 4]> {
        let array = inherited(key)?.as_array().ok()?;
        let v: Vec<f64> = array.iter().filter_map(|o| number(doc, Some(o))).collect();
        let [x0, y0, x1, y1] = v[..] else { return None };
        let r = [x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)];
        (r[2] - r[0] > 1.0 && r[3] - r[1] > 1.0).then_some(r)
    };
    let [x0, y0, x1, y1] = rect(b"CropBox")
        .or_else(|| rect(b"MediaBox"))
        .unwrap_or([0.0, 0.0, 612.0, 792.0]);
    let rotate = inherited(b"Rotate")
        .and_then(|o| o.as_i64().ok())
        .unwrap_or(0)
        .rem_euclid(360);
    let (w, h) = (x1 - x0, y1 - y0);
    match rotate {
        90 => ([0.0, 1.0, 1.0, 0.0, -x0, -y0], h, w),
        180 => ([-1.0, 0.0, 0.0, 1.0, x1, -y0], w, h),
        270 => ([0.0, -1.0, -1.0, 0.0, y1, x1], h, w),
        _ => ([1.0, 0.0, 0.0, -1.0, -x0, y1], w, h),
    }
}

fn pages_up_to(page: u32) -> String {
    if page == 1 {
        "page 1".to_owned()
    } else {
        format!("pages 1 to {page}")
    }
}

/// The content of the last page read, kept for the next when it draws the same streams (pages
/// that share one stream, as generated files do, decompress it once, and still count it each
/// time).
#[derive(Default)]
struct ContentCache {
    ids: Vec<ObjectId>,
    content: Rc<Vec<u8>>,
}

/// One page to read, and what it is read in.
struct Page<'a> {
    doc: &'a Document,
    uri: &'a str,
    number: u32,
    id: ObjectId,
    limits: PdfLimits,
    keep_hidden: bool,
}

fn read_page(
    page: &Page<'_>,
    fonts: &mut FontCache,
    budget: &mut Budget,
    contents: &mut ContentCache,
    report: &mut Report,
) -> Result<PageText, ParseError> {
    let (frame, width, height) = page_frame(page.doc, page.id);
    let content = page_content(page, contents, report)?;
    budget.count_content(page.uri, page.number, content.len())?;
    let resources = page_resources(page.doc, page.id);
    let context = PageContext {
        doc: page.doc,
        uri: page.uri,
        number: page.number,
        limits: page.limits,
        keep_hidden: page.keep_hidden,
        frame,
        width,
        height,
    };
    let mut interpreter = Interpreter::new(context, fonts, budget);
    interpreter.run_page(&content, &resources)?;
    let read = interpreter.finish();
    if read.too_many_runs {
        return Err(ParseError::LimitExceeded {
            source_uri: page.uri.to_owned(),
            what: format!("the text runs of page {}", page.number),
            limit: format!("{} runs", page.limits.max_runs_per_page),
        });
    }
    report.page(page.number, &read);
    Ok(PageText {
        number: page.number,
        width,
        height,
        runs: read.runs,
        off_page_bytes: read.off_page_bytes,
    })
}

/// The page's content streams, decompressed and joined. A stream that is missing (a truncated
/// file) or does not decode is noted in the report; one that does not decode is read as it is
/// stored, as lopdf and viewers do.
fn page_content(page: &Page<'_>, cache: &mut ContentCache, report: &mut Report) -> Result<Rc<Vec<u8>>, ParseError> {
    let ids = page.doc.get_page_contents(page.id);
    if !ids.is_empty() && ids == cache.ids {
        return Ok(Rc::clone(&cache.content));
    }
    let limit = page.limits.max_stream_bytes;
    let over_limit = || ParseError::LimitExceeded {
        source_uri: page.uri.to_owned(),
        what: format!("the decompressed content of page {}", page.number),
        limit: format!("{} MiB", limit >> 20),
    };
    let mut content = Vec::new();
    for &id in &ids {
        let Ok(stream) = page.doc.get_object(id).and_then(Object::as_stream) else {
            report.damaged(page.number, "a content stream is missing".to_owned());
            continue;
        };
        let remaining = limit.saturating_sub(content.len());
        match stream.decompressed_content_with_limit(remaining) {
            Ok(data) => content.extend_from_slice(&data),
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
                return Err(over_limit());
            }
            Err(err) if stream.content.len() <= remaining => {
                report.damaged(
                    page.number,
                    format!("a content stream does not decode ({err}) and was read as stored"),
                );
                content.extend_from_slice(&stream.content);
            }
            Err(_) => return Err(over_limit()),
        }
        content.push(b'\n');
    }
    let content = Rc::new(content);
    *cache = ContentCache {
        ids,
        content: Rc::clone(&content),
    };
    Ok(content)
}

/// A page's resource dictionaries, nearest first (its own, then those it inherits).
fn page_resources(doc: &Document, page_id: ObjectId) -> Vec<Dictionary> {
    let Ok((own, inherited)) = doc.get_page_resources(page_id) else {
        return Vec::new();
    };
    own.into_iter()
        .cloned()
        .chain(
            inherited
                .into_iter()
                .filter_map(|id| doc.get_dictionary(id).ok().cloned()),
        )
        .collect()
}

/// Looks `name` up in the `category` (`Font`, `XObject`) of the first resource dictionary that has
/// it.
pub(super) fn resource<'a>(
    doc: &'a Document,
    resources: &'a [Dictionary],
    category: &[u8],
    name: &[u8],
) -> Option<&'a Object> {
    resources.iter().find_map(|dict| {
        let entries = deref(doc, dict.get(category).ok())?.as_dict().ok()?;
        entries.get(name).ok()
    })
}
