//! What the user is told about a PDF's rendition: the repairs the reader made, the content it
//! skipped and the hidden text it left out, as `left_out` counts and one warning each (with the
//! pages), so that a rendition that may not be the whole of the file never looks whole.

use lopdf::xref::XrefRecovery;
use rag_core::Rendition;

use super::content::Skipped;
use super::interpreter::PageRead;
use super::visibility::{Hidden, HiddenBytes};

/// Pages listed in one warning at most; past them it says how many more.
const MAX_PAGES_LISTED: usize = 12;

/// What reading the file repaired, skipped and left out.
#[derive(Debug, Default)]
pub(super) struct Report {
    /// How lopdf repaired the cross-reference data, if it had to.
    pub(super) repaired: Option<XrefRecovery>,
    /// Pages whose content was damaged, and how.
    damaged: Vec<(u32, String)>,
    hidden: HiddenBytes,
    hidden_pages: Vec<u32>,
    skipped: Skipped,
    skipped_pages: Vec<u32>,
}

impl Report {
    /// Notes what the interpreter skipped and left out as hidden on page `number`.
    pub(super) fn page(&mut self, number: u32, read: &PageRead) {
        if read.hidden.total() > 0 {
            self.hidden.merge(&read.hidden);
            self.hidden_pages.push(number);
        }
        if read.skipped.tokens > 0 {
            self.skipped.tokens += read.skipped.tokens;
            self.skipped.bytes += read.skipped.bytes;
            self.skipped_pages.push(number);
        }
    }

    /// Notes that the content of page `number` was damaged: `what` happened to it.
    pub(super) fn damaged(&mut self, number: u32, what: String) {
        self.damaged.push((number, what));
    }

    /// Bytes of text left out as hidden, all pages together.
    pub(super) fn hidden_bytes(&self) -> usize {
        self.hidden.total()
    }

    /// Writes the counts into `left_out` and the warnings.
    pub(super) fn write(&self, rendition: &mut Rendition) {
        match self.repaired {
            Some(XrefRecovery::Reconstructed) => rendition.warn(
                "the file is damaged or truncated: its cross-reference table was rebuilt from the objects \
                 found, so pages or text may be missing; repair it (e.g. `qpdf in.pdf repaired.pdf`) or export it again",
            ),
            Some(_) => rendition.warn(
                "the file is damaged: its cross-reference data was not where the file says and was found \
                 nearby, so text may be missing",
            ),
            None => {}
        }
        for (page, what) in &self.damaged {
            rendition.warn(format!("page {page}: {what}, so its text may be incomplete"));
        }
        rendition.leave_out("malformed_content", self.skipped.bytes);
        if self.skipped.tokens > 0 {
            rendition.warn(format!(
                "skipped {} malformed content-stream {} ({} B) on {} and read the rest of {}",
                self.skipped.tokens,
                plural(self.skipped.tokens, "token", "tokens"),
                self.skipped.bytes,
                pages(&self.skipped_pages),
                plural(self.skipped_pages.len(), "that page", "those pages"),
            ));
        }
        rendition.leave_out("hidden", self.hidden.total());
        if self.hidden.total() > 0 {
            let why: Vec<&str> = Hidden::ALL
                .iter()
                .filter(|&&why| self.hidden.get(why) > 0)
                .map(|why| why.describe())
                .collect();
            rendition.warn(format!(
                "left out {} B of text a reader does not see ({}) on {}; keep hidden text to read it",
                self.hidden.total(),
                why.join("; "),
                pages(&self.hidden_pages),
            ));
        }
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// `page 3`, `pages 1, 4-6 and 9`, and past [`MAX_PAGES_LISTED`] ranges, `... and 40 more`.
pub(super) fn pages(numbers: &[u32]) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &n in numbers {
        match ranges.last_mut() {
            Some((_, last)) if n == *last + 1 => *last = n,
            _ => ranges.push((n, n)),
        }
    }
    let shown: Vec<String> = ranges
        .iter()
        .take(MAX_PAGES_LISTED)
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect();
    let word = if numbers.len() == 1 { "page" } else { "pages" };
    let rest: usize = ranges
        .iter()
        .skip(MAX_PAGES_LISTED)
        .map(|&(a, b)| (b - a + 1) as usize)
        .sum();
    match (shown.split_last(), rest) {
        (None, _) => String::new(),
        (Some((last, [])), 0) => format!("{word} {last}"),
        (Some((last, init)), 0) => format!("{word} {} and {last}", init.join(", ")),
        (Some(_), rest) => format!("{word} {} and {rest} more", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_listed_as_ranges_and_cut_short() {
        assert_eq!(pages(&[3]), "page 3");
        assert_eq!(pages(&[1, 2]), "pages 1-2");
        assert_eq!(pages(&[1, 4, 5, 6, 9]), "pages 1, 4-6 and 9");
        let many: Vec<u32> = (1..=100).step_by(2).collect();
        assert_eq!(
            pages(&many),
            "pages 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23 and 38 more"
        );
    }
}
