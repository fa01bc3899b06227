//! The analysis: the search terms of a text, as a search engine finds them.
//!
//! Words are runs of letters, digits and (in Thai) combining marks. A word in a script written
//! with spaces also counts as its identifier parts (`readLines` is `readlines`, `read` and
//! `lines`), and a snake_case identifier as itself and its words (`read_file` is `read_file`,
//! `read` and `file`), so that a question naming an identifier finds it whole or by its words.
//! Each is lower-cased, dropped if it is an English stop word (NLTK's list) and reduced by the
//! Snowball English stemmer.
//!
//! Scripts written without spaces between words have no words to split on, so a query term would
//! match only a text whose whole run of letters it equals. Their runs are cut into overlapping
//! character bigrams instead, as Lucene's CJK analyser does: `東京は日本の首都です` is `東京`,
//! `京は`, `は日`, ..., `首都`, `都で`, `です`, so the query `首都` finds it. That applies to Han,
//! Hiragana, Katakana and Hangul (Korean is written with spaces, but its words carry particles,
//! `서울은`, and Lucene bigrams Hangul as well), and to Thai, which Lucene's CJK analyser leaves
//! whole: there the bigrams are of letters with their combining vowels and tone marks, so that no
//! term starts with a mark. A run of one character is a term of one character. Grams are neither
//! stop words nor stemmed.

use std::collections::HashSet;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

static STOP_WORDS: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| stop_words::lookup("en").unwrap_or_default().iter().copied().collect());

/// The word stem BM25 compares: the Snowball English stem of the lower-cased word.
///
/// ```
/// use rag_packer::stem;
///
/// assert_eq!(stem("reranking"), "rerank");
/// assert_eq!(stem("Rerankers"), "rerank");
/// assert_eq!(stem("lines"), "line");
/// assert_eq!(stem("class"), "class");
/// ```
pub fn stem(word: &str) -> String {
    STEMMER.stem(&word.to_lowercase()).into_owned()
}

/// The term of a lower-cased word: `None` for a stop word, which carries no meaning to search for,
/// else its stem.
pub(super) fn word_term(word: &str) -> Option<String> {
    (!STOP_WORDS.contains(word)).then(|| STEMMER.stem(word).into_owned())
}

/// What the analysis finds in a text, before stop words and stemming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Piece<'a> {
    /// A lower-cased word or identifier part of a script written with spaces: a stop word is no
    /// term, any other is stemmed.
    Word(&'a str),
    /// A bigram (or a lone character) of a script written without spaces: a term as it is.
    Gram(&'a str),
}

/// How a script separates its words, for the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    /// With spaces or punctuation: words are runs of letters and digits.
    Spaced,
    /// Han, Hiragana, Katakana, Hangul: bigrams of characters.
    Cjk,
    /// Thai: bigrams of letters with their combining marks.
    Thai,
}

fn script(c: char) -> Script {
    match u32::from(c) {
        // Han: the unified ideographs, extension A, the compatibility ideographs, extensions B to
        // H; and the iteration and closing marks and the ideographic zero (々 〆 〇), Hangzhou
        // numerals and their kin, which stand in Han text.
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0xF900..=0xFAFF
        | 0x2_0000..=0x3_23AF
        | 0x3005..=0x3007
        | 0x3021..=0x3029
        | 0x3038..=0x303B
        // Hiragana, Katakana (with its phonetic extensions and the halfwidth forms).
        | 0x3040..=0x309F
        | 0x30A0..=0x30FF
        | 0x31F0..=0x31FF
        | 0xFF66..=0xFF9F
        // Hangul: syllables, jamo, compatibility and halfwidth jamo.
        | 0xAC00..=0xD7AF
        | 0x1100..=0x11FF
        | 0x3130..=0x318F
        | 0xA960..=0xA97F
        | 0xD7B0..=0xD7FF
        | 0xFFA0..=0xFFDC => Script::Cjk,
        0x0E00..=0x0E7F => Script::Thai,
        _ => Script::Spaced,
    }
}

/// A Thai combining vowel or tone mark: it belongs to the letter before it.
fn is_thai_mark(c: char) -> bool {
    matches!(u32::from(c), 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E)
}

/// Whether `c` is part of a word: a letter or digit, or a Thai mark (some of which Unicode counts
/// as neither, so that words would otherwise break inside a syllable).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_thai_mark(c)
}

/// Calls `emit` with each piece of `text`, in order (see the module documentation).
pub(super) fn for_each_piece(text: &str, mut emit: impl FnMut(Piece<'_>)) {
    let mut lower = String::new();
    let mut gram = String::new();
    let mut units: Vec<&str> = Vec::new();
    for token in text.split(|c: char| !is_word_char(c) && c != '_') {
        // A snake_case identifier (`read_file`) counts whole as well as by its parts.
        if token.contains('_') {
            let whole = token.trim_matches('_');
            if whole.split('_').filter(|part| !part.is_empty()).nth(1).is_some() && whole.is_ascii() {
                lower.clear();
                lower.push_str(&whole.to_ascii_lowercase());
                emit(Piece::Word(&lower));
            }
        }
        for run in token.split('_').filter(|w| !w.is_empty()) {
            analyse_run(run, &mut lower, &mut gram, &mut units, &mut emit);
        }
    }
}

/// Emits the pieces of one run of word characters.
fn analyse_run<'u>(
    run: &'u str,
    lower: &mut String,
    gram: &mut String,
    units: &mut Vec<&'u str>,
    emit: &mut impl FnMut(Piece<'_>),
) {
    {
        for (script, segment) in segments(run) {
            match script {
                Script::Spaced => emit_word(segment, lower, emit),
                Script::Cjk | Script::Thai => {
                    units.clear();
                    units.extend(gram_units(segment, script));
                    emit_grams(units, gram, emit);
                }
            }
        }
    }
}

/// The maximal pieces of `run` in one [`Script`], in order.
fn segments(run: &str) -> impl Iterator<Item = (Script, &str)> {
    // Most runs are ASCII: one segment, without looking at each character's script.
    let mut rest = if run.is_ascii() { "" } else { run };
    let mut ascii = run.is_ascii().then_some((Script::Spaced, run));
    std::iter::from_fn(move || {
        if let Some(whole) = ascii.take() {
            return Some(whole);
        }
        let first = rest.chars().next()?;
        // A Thai mark continues whatever it follows; leading a run, it goes with Thai.
        let kind = |c: char| if is_thai_mark(c) { None } else { Some(script(c)) };
        let current = kind(first).unwrap_or(Script::Thai);
        let end = rest
            .char_indices()
            .skip(1)
            .find(|&(_, c)| kind(c).is_some_and(|k| k != current))
            .map_or(rest.len(), |(at, _)| at);
        let (segment, tail) = rest.split_at(end);
        rest = tail;
        Some((current, segment))
    })
}

/// The units a gram counts: characters, or for Thai, a letter with the marks that follow it.
fn gram_units(segment: &str, script: Script) -> impl Iterator<Item = &str> {
    let mut rest = segment;
    std::iter::from_fn(move || {
        let mut chars = rest.char_indices();
        chars.next()?;
        let end = chars
            .find(|&(_, c)| !(script == Script::Thai && is_thai_mark(c)))
            .map_or(rest.len(), |(at, _)| at);
        let (unit, tail) = rest.split_at(end);
        rest = tail;
        Some(unit)
    })
}

/// Emits the overlapping bigrams of `units`, or the lone unit.
fn emit_grams(units: &[&str], gram: &mut String, emit: &mut impl FnMut(Piece<'_>)) {
    if let [only] = units {
        emit(Piece::Gram(only));
        return;
    }
    for pair in units.windows(2) {
        gram.clear();
        gram.push_str(pair[0]);
        gram.push_str(pair[1]);
        emit(Piece::Gram(gram));
    }
}

/// Emits the lower-cased `word` and, for an identifier made of parts (`readLines`,
/// `HTTP2Server`), each part too. Parts break where a lower-case letter or a digit is followed by
/// an upper-case one, and before the last capital of a run of capitals followed by a lower-case
/// letter (`HTTPServer` is `http` and `server`).
fn emit_word(word: &str, lower: &mut String, emit: &mut impl FnMut(Piece<'_>)) {
    lower.clear();
    lower.extend(word.chars().flat_map(char::to_lowercase));
    emit(Piece::Word(lower));
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start = 0;
    for k in 1..chars.len() {
        let (at, c) = chars[k];
        let prev = chars[k - 1].1;
        let next_is_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
        let boundary =
            c.is_uppercase() && (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_is_lower));
        if boundary {
            emit(Piece::Word(&word[start..at].to_lowercase()));
            start = at;
        }
    }
    if start > 0 {
        emit(Piece::Word(&word[start..].to_lowercase()));
    }
}

/// The search terms of `text`, in order: words and identifier parts, lower-cased, stop words
/// dropped, stemmed; and the bigrams of scripts written without spaces. A query's terms are these,
/// de-duplicated.
///
/// ```
/// use rag_packer::search_terms;
///
/// assert_eq!(search_terms("How do I read a file line by line?"), ["read", "file", "line", "line"]);
/// assert_eq!(search_terms("filehandle.readLines()"), ["filehandl", "readlin", "read", "line"]);
/// assert_eq!(search_terms("東京の首都"), ["東京", "京の", "の首", "首都"]);
/// ```
pub fn search_terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    for_each_piece(text, |piece| match piece {
        Piece::Word(word) => terms.extend(word_term(word)),
        Piece::Gram(gram) => terms.push(gram.to_owned()),
    });
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<String> {
        let mut all = Vec::new();
        for_each_piece(text, |piece| {
            all.push(match piece {
                Piece::Word(w) => w.to_owned(),
                Piece::Gram(g) => format!("[{g}]"),
            })
        });
        all
    }

    #[test]
    fn identifiers_count_as_their_parts() {
        assert_eq!(
            pieces("readLines HTTPServer read_file utf8Decode x"),
            [
                "readlines",
                "read",
                "lines",
                "httpserver",
                "http",
                "server",
                "read_file",
                "read",
                "file",
                "utf8decode",
                "utf8",
                "decode",
                "x"
            ]
        );
    }

    #[test]
    fn stop_words_are_not_terms() {
        assert_eq!(search_terms("how do I do it, and why?"), Vec::<String>::new());
    }

    #[test]
    fn chinese_is_cut_into_overlapping_bigrams() {
        assert_eq!(
            pieces("北京是中国的首都。"),
            ["[北京]", "[京是]", "[是中]", "[中国]", "[国的]", "[的首]", "[首都]"]
        );
        assert_eq!(pieces("首都"), ["[首都]"]);
        assert_eq!(pieces("国"), ["[国]"], "a lone character is a term of its own");
    }

    #[test]
    fn japanese_kana_and_kanji_are_cut_into_bigrams_across_scripts() {
        assert_eq!(
            pieces("東京は日本の首都です。"),
            [
                "[東京]", "[京は]", "[は日]", "[日本]", "[本の]", "[の首]", "[首都]", "[都で]", "[です]"
            ]
        );
        assert_eq!(
            pieces("コンピュータ"),
            ["[コン]", "[ンピ]", "[ピュ]", "[ュー]", "[ータ]"]
        );
    }

    #[test]
    fn korean_words_are_cut_into_bigrams_each() {
        assert_eq!(
            pieces("서울은 한국의 수도"),
            ["[서울]", "[울은]", "[한국]", "[국의]", "[수도]"]
        );
    }

    #[test]
    fn thai_is_cut_into_bigrams_of_letters_with_their_marks() {
        // "ภาษาไทย" (the Thai language) has no marks; "ที่นี่" (here) has a vowel and a tone mark on
        // each ท and น, which stay with their letter.
        assert_eq!(pieces("ภาษาไทย"), ["[ภา]", "[าษ]", "[ษา]", "[าไ]", "[ไท]", "[ทย]"]);
        assert_eq!(pieces("ที่นี่"), ["[ที่นี่]"]);
        assert_eq!(pieces("กรุงเทพ"), ["[กรุ]", "[รุง]", "[งเ]", "[เท]", "[ทพ]"]);
    }

    #[test]
    fn scripts_meeting_in_one_run_are_analysed_each_its_way() {
        assert_eq!(pieces("Unicode字符集 v2"), ["unicode", "[字符]", "[符集]", "v2"]);
        assert_eq!(pieces("readLines関数"), ["readlines", "read", "lines", "[関数]"]);
    }

    #[test]
    fn grams_are_neither_stop_words_nor_stemmed() {
        assert_eq!(search_terms("の首都 is"), ["の首", "首都"]);
    }
}
