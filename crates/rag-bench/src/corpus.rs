//! A deterministic synthetic Markdown corpus with every block type, and loading a real one.
//!
//! Files alternate between two shapes, because the chunker's cost depends on them: reference
//! documentation (many short sections, lists, tables, code) and long prose (few headings, long
//! paragraphs, some longer than a chunk). Every file has ATX headings of all levels and setext
//! headings, nested lists, a table, fenced code, a quote; some have front matter, CJK paragraphs,
//! emoji, CRLF line endings.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// One Markdown file of a corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Its path relative to the corpus root (`doc-007.md`).
    pub name: String,
    /// Its text.
    pub text: String,
}

/// A small deterministic generator (SplitMix64): the corpus must be the same on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `lo..hi` (`lo` if the range is empty).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            lo
        } else {
            lo + (self.next_u64() % (hi - lo) as u64) as usize
        }
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.range(0, 100) < percent
    }
}

const SYLLABLES: [&str; 32] = [
    "ka", "lo", "ren", "ti", "mar", "os", "ve", "dun", "sel", "ia", "pra", "quo", "nex", "ul", "bri", "ta", "gon",
    "es", "ry", "fal", "em", "cor", "di", "an", "tho", "pe", "lu", "ser", "vin", "ox", "mi", "ad",
];
const COMMON: [&str; 24] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "with", "as", "on", "be", "by", "this", "are", "from",
    "or", "an", "which", "not", "can", "index", "token",
];
const CJK: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";
const EMOJI: [&str; 8] = ["🚀", "✅", "⚠️", "👍🏽", "🧪", "📦", "🔥", "👨‍👩‍👧"];

/// A pseudo-word: mostly a common English word, otherwise two or three syllables.
fn word(rng: &mut Rng) -> String {
    if rng.chance(45) {
        return COMMON[rng.range(0, COMMON.len())].to_owned();
    }
    let mut w = String::new();
    for _ in 0..rng.range(2, 4) {
        w.push_str(SYLLABLES[rng.range(0, SYLLABLES.len())]);
    }
    w
}

fn sentence(rng: &mut Rng, out: &mut String) {
    let words = rng.range(5, 26);
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        let w = word(rng);
        match rng.range(0, 60) {
            0 => {
                let _ = write!(out, "`{w}()`");
            }
            1 => {
                let _ = write!(out, "[{w}](https://example.com/{w})");
            }
            2 => {
                let _ = write!(out, "{}", rng.range(0, 100_000));
            }
            3 => {
                let _ = write!(out, "**{w}**");
            }
            4 => out.push_str(EMOJI[rng.range(0, EMOJI.len())]),
            _ if i == 0 => {
                let mut chars = w.chars();
                if let Some(first) = chars.next() {
                    out.extend(first.to_uppercase());
                    out.push_str(chars.as_str());
                }
            }
            _ => out.push_str(&w),
        }
        if i + 1 < words && rng.chance(8) {
            out.push(',');
        }
    }
    out.push(['.', '.', '.', '?', '!'][rng.range(0, 5)]);
}

fn paragraph(rng: &mut Rng, out: &mut String, sentences: usize) {
    for i in 0..sentences {
        if i > 0 {
            out.push(' ');
        }
        sentence(rng, out);
    }
    out.push_str("\n\n");
}

fn cjk_paragraph(rng: &mut Rng, out: &mut String) {
    let chars: Vec<char> = CJK.chars().collect();
    for _ in 0..rng.range(3, 8) {
        for _ in 0..rng.range(10, 40) {
            out.push(chars[rng.range(0, chars.len())]);
        }
        out.push('。');
    }
    out.push_str("\n\n");
}

fn heading(rng: &mut Rng, out: &mut String, level: usize) {
    let mut title = String::new();
    for i in 0..rng.range(1, 6) {
        if i > 0 {
            title.push(' ');
        }
        title.push_str(&word(rng));
    }
    if level <= 2 && rng.chance(25) {
        let underline = if level == 1 { "=" } else { "-" };
        let _ = write!(out, "{title}\n{}\n\n", underline.repeat(title.len().max(3)));
    } else {
        let _ = write!(out, "{} {title}\n\n", "#".repeat(level));
    }
}

fn list(rng: &mut Rng, out: &mut String) {
    let ordered = rng.chance(30);
    for i in 0..rng.range(3, 9) {
        let marker = if ordered { format!("{}.", i + 1) } else { "-".to_owned() };
        out.push_str(&marker);
        out.push(' ');
        sentence(rng, out);
        out.push('\n');
        if rng.chance(25) {
            for _ in 0..rng.range(1, 4) {
                out.push_str("  - ");
                sentence(rng, out);
                out.push('\n');
            }
        }
    }
    out.push('\n');
}

fn table(rng: &mut Rng, out: &mut String) {
    let cols = rng.range(2, 5);
    let row = |rng: &mut Rng, out: &mut String| {
        out.push('|');
        for _ in 0..cols {
            let _ = write!(out, " {} {} |", word(rng), rng.range(0, 1000));
        }
        out.push('\n');
    };
    row(rng, out);
    out.push('|');
    out.push_str(&"---|".repeat(cols));
    out.push('\n');
    for _ in 0..rng.range(3, 15) {
        row(rng, out);
    }
    out.push('\n');
}

fn code(rng: &mut Rng, out: &mut String) {
    let lang = ["rust", "python", "sh", ""][rng.range(0, 4)];
    let _ = writeln!(out, "```{lang}");
    let mut depth = 0usize;
    for _ in 0..rng.range(4, 30) {
        let name = word(rng);
        let _ = writeln!(
            out,
            "{}let {name} = {}({}, {});",
            "    ".repeat(depth),
            word(rng),
            rng.range(0, 512),
            word(rng)
        );
        depth = (depth + rng.range(0, 3)).saturating_sub(1).min(3);
    }
    out.push_str("```\n\n");
}

fn quote(rng: &mut Rng, out: &mut String) {
    for _ in 0..rng.range(1, 4) {
        out.push_str("> ");
        sentence(rng, out);
        out.push('\n');
    }
    out.push('\n');
}

/// One file of reference documentation: many short sections.
fn reference_doc(rng: &mut Rng, target: usize) -> String {
    let mut out = String::new();
    if rng.chance(50) {
        let _ = write!(
            out,
            "---\ntitle: {}\ntags: [{}, {}]\n---\n\n",
            word(rng),
            word(rng),
            word(rng)
        );
    }
    titled_sections(rng, &mut out, target, 2..7, 1..4, |rng, out| match rng.range(0, 10) {
        0..=3 => {
            let n = rng.range(1, 5);
            paragraph(rng, out, n);
        }
        4 | 5 => list(rng, out),
        6 => table(rng, out),
        7 | 8 => code(rng, out),
        _ => quote(rng, out),
    });
    out
}

/// One file of long prose: long sections of long paragraphs, some longer than a 512-token chunk.
fn prose_doc(rng: &mut Rng, target: usize) -> String {
    let mut out = String::new();
    titled_sections(rng, &mut out, target, 2..4, 6..20, |rng, out| match rng.range(0, 20) {
        0 => cjk_paragraph(rng, out),
        1 => list(rng, out),
        2 => quote(rng, out),
        3 => {
            let n = rng.range(25, 45);
            paragraph(rng, out, n);
        }
        _ => {
            let n = rng.range(3, 12);
            paragraph(rng, out, n);
        }
    });
    out
}

/// Appends a title (a level-1 heading), then sections until `out` holds `target` bytes: each a
/// heading of a level in `levels` followed by a number in `blocks` of blocks that `block` writes.
fn titled_sections(
    rng: &mut Rng,
    out: &mut String,
    target: usize,
    levels: Range<usize>,
    blocks: Range<usize>,
    block: impl Fn(&mut Rng, &mut String),
) {
    heading(rng, out, 1);
    while out.len() < target {
        let level = rng.range(levels.start, levels.end);
        heading(rng, out, level);
        for _ in 0..rng.range(blocks.start, blocks.end) {
            block(rng, out);
        }
    }
}

/// A corpus of at least `bytes` bytes of Markdown, in files of 8 to 120 KB; the same for the same
/// size on every machine.
pub fn generate(bytes: usize) -> Vec<File> {
    let mut rng = Rng::new(0x5eed_0000_0000_0006);
    let mut files = Vec::new();
    let mut total = 0usize;
    while total < bytes {
        let i = files.len();
        let target = rng.range(8 * 1024, 120 * 1024).min(bytes - total).max(1024);
        let mut text = if i % 2 == 0 {
            reference_doc(&mut rng, target)
        } else {
            prose_doc(&mut rng, target)
        };
        if i % 7 == 3 {
            text = text.replace('\n', "\r\n");
        }
        total += text.len();
        files.push(File {
            name: format!("doc-{i:03}.md"),
            text,
        });
    }
    files
}

/// Writes `files` under `dir` (created if missing) and returns the directory.
pub fn write(files: &[File], dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    for file in files {
        std::fs::write(dir.join(&file.name), &file.text)?;
    }
    Ok(dir.to_path_buf())
}

/// Every `.md` and `.markdown` file under `dir`, recursively, in path order; files that are not
/// UTF-8 are skipped (the chunker would reject them).
pub fn load(dir: &Path) -> std::io::Result<Vec<File>> {
    let mut paths = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))
            {
                paths.push(path);
            }
        }
    }
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        if let Ok(text) = String::from_utf8(std::fs::read(&path)?) {
            let name = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
            files.push(File { name, text });
        }
    }
    Ok(files)
}
