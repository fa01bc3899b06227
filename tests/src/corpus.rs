//! The shared corpus: real Markdown (read from a directory, e.g. the repository's `docs/`), and
//! edge-case inputs made by generators with a size parameter, so that the contract run, the
//! hostile-input tests and the fuzz seeds use the same shapes at different sizes.
//!
//! ```
//! use rag_contract::corpus;
//!
//! let table = corpus::table(3);
//! assert_eq!(table.lines().count(), 5); // header, delimiter, three rows
//! assert!(corpus::edge_cases().iter().any(|f| f.name == "bom.md"));
//! ```

use std::path::Path;

use rag_core::{Chunk, RequestContext, TrustLevel};
use serde_json::json;

use crate::packer::PackerCase;

/// One input file for a parser and chunker: a name and its bytes (not necessarily UTF-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// A name for reports; its extension says the type (`.md` or `.txt`).
    pub name: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

impl Fixture {
    /// A fixture from text.
    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            bytes: text.into().into_bytes(),
        }
    }
}

/// Every `.md` file under `dir`, recursively, in sorted path order; names are relative to `dir`.
pub fn markdown_files(dir: &Path) -> std::io::Result<Vec<Fixture>> {
    let mut out = Vec::new();
    collect_markdown(dir, dir, &mut out)?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn collect_markdown(root: &Path, dir: &Path, out: &mut Vec<Fixture>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_markdown(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            out.push(Fixture {
                name,
                bytes: std::fs::read(&path)?,
            });
        }
    }
    Ok(())
}

/// A small deterministic generator (xorshift64), so generated inputs are the same on every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced by a fixed non-zero seed).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 { 0x9e37_79b9_7f4a_7c15 } else { seed })
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (`n` at least 1).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// An empty file.
pub fn empty() -> String {
    String::new()
}

/// Whitespace only: spaces, tabs, LF, CRLF, lone CR, a no-break space.
pub fn whitespace_only() -> String {
    " \t\n\r\n  \r \u{a0}\n\n\t".to_owned()
}

/// One line of `bytes` ASCII letters and digits, no space or punctuation, and a final newline.
pub fn long_line(bytes: usize) -> String {
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut rng = Rng::new(1);
    let mut s: String = (0..bytes)
        .map(|_| alphabet[rng.below(alphabet.len())] as char)
        .collect();
    s.push('\n');
    s
}

/// About `bytes` bytes of CJK ideographs without punctuation or spaces.
pub fn cjk(bytes: usize) -> String {
    let mut rng = Rng::new(2);
    (0..bytes / 3)
        .map(|_| char::from_u32(0x4e00 + rng.below(0x5000) as u32).unwrap_or('中'))
        .collect()
}

/// Emoji ZWJ sequences, flags, skin tones, variation selectors and stacked combining marks, in
/// words of every length from 1 to 12 characters, so a cut at any budget lands next to one.
pub fn emoji_and_marks(repeats: usize) -> String {
    let pieces = [
        "👩\u{200d}👩\u{200d}👧\u{200d}👦",
        "e\u{301}\u{302}\u{303}",
        "🇫🇷",
        "👍🏽",
        "❤\u{fe0f}",
        "a\u{308}",
        "🏳\u{fe0f}\u{200d}🌈",
        "ก\u{e34}\u{e48}",
        "\u{1100}\u{1161}\u{11a8}",
    ];
    let mut s = String::new();
    for r in 0..repeats {
        for len in 1..=12 {
            for i in 0..len {
                s.push_str(pieces[(r + len + i) % pieces.len()]);
            }
            s.push(if len % 4 == 0 { '\n' } else { ' ' });
        }
    }
    s
}

/// Markdown with CRLF line endings.
pub fn crlf() -> String {
    "# Title\r\n\r\nFirst paragraph,\r\nsecond line.\r\n\r\n## Part\r\n\r\n- one\r\n- two\r\n\r\n```\r\ncode\r\n```\r\n"
        .to_owned()
}

/// Markdown with lone CR line endings (old Mac OS).
pub fn lone_cr() -> String {
    "# Title\r\rFirst paragraph,\rsecond line.\r\r## Part\r\rMore text.\r".to_owned()
}

/// Markdown starting with a UTF-8 byte-order mark.
pub fn bom() -> String {
    "\u{feff}# Title\n\nBody after a byte-order mark.\n".to_owned()
}

/// Markdown with one invalid byte (0xFF) at the returned byte offset.
pub fn invalid_utf8() -> (Vec<u8>, usize) {
    let mut bytes = b"# Title\n\nValid text, then ".to_vec();
    let offset = bytes.len();
    bytes.push(0xff);
    bytes.extend_from_slice(b" and more.\n");
    (bytes, offset)
}

/// A binary file: a PNG signature, NUL bytes and every byte value; its first invalid UTF-8 byte
/// is at offset 0 (0x89).
pub fn binary(bytes: usize) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let mut rng = Rng::new(3);
    while out.len() < bytes {
        out.push(rng.next_u64() as u8);
    }
    out
}

/// `n` headings, levels cycling 1 to 6, each with a one-line body.
pub fn many_headings(n: usize) -> String {
    let mut s = String::with_capacity(n * 32);
    for i in 0..n {
        let level = i % 6 + 1;
        s.push_str(&format!("{} Heading {i}\n\nBody {i}.\n\n", "#".repeat(level)));
    }
    s
}

/// Headings nested six deep, then skipping levels up and down.
pub fn nested_skipping_headings() -> String {
    let mut s = String::new();
    for level in 1..=6 {
        s.push_str(&format!(
            "{} Level {level}\n\nText at level {level}.\n\n",
            "#".repeat(level)
        ));
    }
    for level in [1, 3, 6, 2, 5, 1, 4, 6, 3] {
        s.push_str(&format!("{} Skip to {level}\n\nText.\n\n", "#".repeat(level)));
    }
    s.push_str("Setext one\n==========\n\nSetext two\n----------\n\n###### Six\n\n# One\n");
    s
}

/// Block quotes nested `depth` deep.
pub fn nested_quotes(depth: usize) -> String {
    format!("{} deep quote\n\nAfter.\n", ">".repeat(depth))
}

/// Lists nested `depth` deep (each item indented two more spaces than its parent).
pub fn nested_lists(depth: usize) -> String {
    let mut s = String::new();
    for d in 0..depth {
        s.push_str(&" ".repeat(2 * d));
        s.push_str(&format!("- item {d}\n"));
    }
    s.push_str("\nAfter.\n");
    s
}

/// Lists nested `depth` deep on one line (`- - - ... item`): each marker opens a list inside the
/// previous item.
pub fn nested_lists_inline(depth: usize) -> String {
    format!("{}item\n\nAfter.\n", "- ".repeat(depth))
}

/// Block quotes and lists alternating, `depth` levels on one line (`> - > - ... text`).
pub fn nested_quotes_and_lists(depth: usize) -> String {
    let markers: String = (0..depth).map(|d| if d % 2 == 0 { "> " } else { "- " }).collect();
    format!("{markers}text\n\nAfter.\n")
}

/// A table with a header and `rows` rows.
pub fn table(rows: usize) -> String {
    let mut s = String::from("| id | name | value |\n|---|---|---|\n");
    for i in 0..rows {
        s.push_str(&format!("| {i} | row {i} | {} |\n", i * 7 % 1000));
    }
    s
}

/// A fenced code block of `lines` lines (some look like headings, and are not).
pub fn code_block(lines: usize) -> String {
    let mut s = String::from("# Code\n\n```rust\n");
    for i in 0..lines {
        if i % 50 == 0 {
            s.push_str("# not a heading\n");
        } else {
            s.push_str(&format!("    let x{i} = {i} * 2; // line {i}\n"));
        }
    }
    s.push_str("```\n\nAfter the code.\n");
    s
}

/// A code fence that is never closed.
pub fn unterminated_fence() -> String {
    "# Title\n\nBefore.\n\n```python\ndef f():\n    return 1\n\n# not a heading\n\nstill code\n".to_owned()
}

/// A setext heading whose text has `words` words (longer than small budgets), then a body.
pub fn long_setext_heading(words: usize) -> String {
    let title: Vec<String> = (0..words).map(|i| format!("word{i}")).collect();
    format!("{}\n===\n\nThe body under it.\n", title.join(" "))
}

/// YAML front matter and nothing else.
pub fn front_matter_only() -> String {
    "---\ntitle: Only front matter\ntags: [a, b]\n---\n".to_owned()
}

/// NUL bytes and other control characters, in valid UTF-8.
pub fn control_characters() -> String {
    "# Ti\u{0}tle\n\nText\u{1}\u{7f} with \u{0}\u{0} controls.\u{1b}[31m\n".to_owned()
}

/// The edge cases at sizes small enough for every test run (the hostile-input tests use the full
/// sizes): every fixture here parses as UTF-8 Markdown (`.md`) or text (`.txt`).
pub fn edge_cases() -> Vec<Fixture> {
    // Line endings, encodings and widths mean the same to both parsers, so both read them.
    let in_both_formats = [
        ("whitespace_only", whitespace_only()),
        ("long_line", long_line(20_000)),
        ("cjk", cjk(10_000)),
        ("emoji_and_marks", emoji_and_marks(4)),
        ("crlf", crlf()),
        ("lone_cr", lone_cr()),
        ("bom", bom()),
    ];
    let markdown_only = [
        ("many_headings", many_headings(300)),
        ("nested_skipping_headings", nested_skipping_headings()),
        ("nested_quotes", nested_quotes(200)),
        ("nested_lists", nested_lists(100)),
        ("nested_lists_inline", nested_lists_inline(1_000)),
        ("nested_quotes_and_lists", nested_quotes_and_lists(1_000)),
        ("table", table(500)),
        ("code_block", code_block(300)),
        ("unterminated_fence", unterminated_fence()),
        ("long_setext_heading", long_setext_heading(200)),
        ("front_matter_only", front_matter_only()),
        ("control_characters", control_characters()),
    ];
    let mut fixtures = vec![Fixture::text("empty.md", empty())];
    for (name, text) in in_both_formats {
        fixtures.push(Fixture::text(format!("{name}.md"), text.clone()));
        fixtures.push(Fixture::text(format!("{name}.txt"), text));
    }
    fixtures.extend(markdown_only.map(|(name, text)| Fixture::text(format!("{name}.md"), text)));
    fixtures
}

/// Chunks made from the paragraphs of `text` (split at blank lines), for packing: token counts
/// are word counts (so no tokenizer is needed), scores are deterministic, every fifth chunk has an
/// exact duplicate (changed case and punctuation) and every seventh a near duplicate (one word
/// more), documents alternate between two ids, and the first chunk is pinned when `pin` is set.
pub fn chunks_from_markdown(name: &str, text: &str, tenant: &str, pin: bool) -> Vec<Chunk> {
    let mut rng = Rng::new(
        name.bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))),
    );
    let mut chunks = Vec::new();
    let paragraphs = text.split("\n\n").map(str::trim).filter(|p| !p.is_empty());
    for (i, paragraph) in paragraphs.enumerate() {
        let words = paragraph.split_whitespace().count().max(1);
        let mut chunk = Chunk::with_content(format!("{name}#{i}"), format!("{name}:{}", i % 2), tenant, paragraph);
        chunk.token_count = Some(words);
        chunk.score = Some((rng.below(1000) as f64) / 1000.0);
        chunk.pinned = pin && i == 0;
        if i % 5 == 3 {
            let mut dup = chunk.clone();
            dup.id = format!("{name}#{i}-exact").into();
            dup.set_body(Some(format!("{}!", paragraph.to_uppercase())), None).ok();
            dup.pinned = false;
            dup.score = Some((rng.below(1000) as f64) / 1000.0);
            chunks.push(dup);
        }
        if i % 7 == 4 {
            let mut near = chunk.clone();
            near.id = format!("{name}#{i}-near").into();
            near.set_body(Some(format!("{paragraph} indeed")), None).ok();
            near.token_count = Some(words + 1);
            near.pinned = false;
            near.score = Some((rng.below(1000) as f64) / 1000.0);
            chunks.push(near);
        }
        chunks.push(chunk);
    }
    chunks
}

fn chunk(id: &str, doc: &str, text: &str, score: f64, tokens: usize) -> Chunk {
    let mut c = Chunk::with_content(id, doc, "acme", text);
    c.score = Some(score);
    c.token_count = Some(tokens);
    c
}

/// Packer inputs at the edges, for tenant `acme`: equal scores, negative and zero scores, a chunk
/// over the budget, chunks known only by reference, mixed tenants, invalid inputs (NaN score, zero
/// and missing token counts, repeated ids, budgets of 0 and -1, pinned over budget), many
/// identical chunks, deep metadata and unknown fields, access labels the principal lacks.
pub fn packer_edge_cases(identical: usize) -> Vec<PackerCase> {
    let ctx = RequestContext::local("acme");
    let case = |name: &str, chunks: Vec<Chunk>, budget: i64| PackerCase::new(name, ctx.clone(), chunks, budget);
    let texts = [
        "the refund window is 30 days",
        "The refund window is 14 days!",
        "shipping is free above fifty euros",
        "rerankers score query and passage pairs jointly",
        "alpha beta gamma delta epsilon zeta eta theta",
        "alpha beta gamma delta epsilon zeta eta theta iota",
    ];
    let basic = |score: &dyn Fn(usize) -> f64| -> Vec<Chunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| chunk(&format!("c{i}"), &format!("d{}", i % 3), t, score(i), 3 + i))
            .collect()
    };
    let mut cases = vec![
        case("no chunks", Vec::new(), 10),
        case("all scores equal", basic(&|_| 0.5), 20),
        case("negative scores", basic(&|i| -(i as f64) / 10.0), 20),
        case(
            "zero and negative scores",
            basic(&|i| if i % 2 == 0 { 0.0 } else { -1.0 }),
            12,
        ),
        case(
            "missing scores",
            {
                let mut c = basic(&|_| 0.0);
                c.iter_mut().for_each(|c| c.score = None);
                c
            },
            15,
        ),
    ];
    let mut big = basic(&|i| i as f64);
    big[5].token_count = Some(1_000);
    cases.push(case("a chunk larger than the budget", big, 30));
    let mut remote = basic(&|i| 1.0 / (1.0 + i as f64));
    let mut r = Chunk::with_content_ref("remote", "d9", "acme", "s3://bucket/remote.txt");
    r.token_count = Some(4);
    r.score = Some(0.95);
    remote.push(r);
    cases.push(case("a chunk known only by reference", remote, 25));
    let mut pinned = basic(&|i| i as f64 / 10.0);
    pinned[0].pinned = true;
    pinned[3].pinned = true;
    cases.push(case("two pinned chunks", pinned.clone(), 25));
    cases.push(case("pinned chunks over the budget", pinned, 5));
    let mut pinned_dup = basic(&|i| i as f64 / 10.0);
    pinned_dup[0].pinned = true;
    pinned_dup[1] = chunk("c1", "d1", "THE refund window is 30 days.", 0.9, 6);
    cases.push(case("a duplicate of a pinned chunk", pinned_dup, 100));
    let mut foreign = basic(&|i| i as f64);
    foreign.insert(
        2,
        Chunk::with_content("intruder", "d0", "globex", "the refund window is 30 days"),
    );
    cases.push(case("mixed tenants", foreign, 100));
    let mut nan = basic(&|i| i as f64);
    nan[4].score = Some(f64::NAN);
    cases.push(case("a NaN score", nan, 100));
    let mut inf = basic(&|i| i as f64);
    inf[1].score = Some(f64::NEG_INFINITY);
    cases.push(case("an infinite score", inf, 100));
    let mut zero = basic(&|i| i as f64);
    zero[2].token_count = Some(0);
    cases.push(case("a zero token count", zero, 100));
    let mut missing = basic(&|i| i as f64);
    missing.push(Chunk::with_content_ref(
        "remote",
        "d9",
        "acme",
        "s3://bucket/remote.txt",
    ));
    cases.push(case("a reference without a token count", missing, 100));
    let mut repeated = basic(&|i| i as f64);
    repeated[3].id = "c0".into();
    cases.push(case("a repeated id", repeated, 100));
    cases.push(case("a budget of 0", basic(&|i| i as f64), 0));
    cases.push(case("a budget of -1", basic(&|i| i as f64), -1));
    let same: Vec<Chunk> = (0..identical)
        .map(|i| chunk(&format!("same{i:06}"), "d", "the very same text", 1.0, 4))
        .collect();
    cases.push(case(&format!("{identical} identical chunks"), same, 1_000));
    let mut odd = basic(&|i| i as f64);
    let mut nested = json!("leaf");
    for _ in 0..100 {
        nested = json!({ "n": nested });
    }
    odd[0].metadata.insert("deep".into(), nested);
    odd[1]
        .insert_extra("reranker", json!("bge-large"))
        .expect("reranker is no field of a chunk");
    odd[2].trust = TrustLevel::Untrusted;
    cases.push(case("deep metadata, unknown fields, trust levels", odd, 100));
    // Labels the local principal does not hold, on a candidate, a pinned chunk and a chunk whose
    // NaN score must not matter, since it is never examined.
    let mut labelled = basic(&|i| i as f64);
    labelled[1].acl_labels = vec!["hr-only".into()];
    labelled[4].acl_labels = vec!["hr-only".into(), "exec".into()];
    labelled[4].pinned = true;
    let mut secret = chunk("secret", "d9", "CEO salary is 12 million", f64::NAN, 5);
    secret.acl_labels = vec!["hr-only".into()];
    labelled.push(secret);
    cases.push(case("chunks the principal may not see", labelled, 100));
    cases
}
