//! Reading a content stream into operators and their operands, tolerant as poppler and pdf.js
//! are: a token that is not PDF (a stray `]`, `)`, `>>`, `{` or `}`, `<zz>`, `/Name#zz`, a real
//! with an exponent), an operator nobody knows (`@@@`), an array or dictionary that an operator
//! cuts short (`[1 2 BT`), and the operands an operator does not take are skipped and counted,
//! and reading goes on at the next token, so one bad byte does not cost the rest of the page.
//! An operator whose operands are missing or of the wrong kind is skipped with them.
//!
//! Nothing here recurses on the input: arrays and dictionaries are read with an explicit stack
//! of at most [`MAX_NESTING`] levels (deeper ones are consumed and skipped), an operand holds at
//! most [`MAX_ITEMS`] items and the operand stack at most [`MAX_OPERANDS`] entries, so a stream
//! costs memory in proportion to what it draws, not to how it nests.

/// An operand of a content-stream operator.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Operand {
    Number(f64),
    Name(Vec<u8>),
    String(Vec<u8>),
    Array(Vec<Operand>),
    /// A dictionary (marked-content properties); its entries are not needed and not kept.
    Dict,
    Bool(bool),
    Null,
}

impl Operand {
    pub(super) fn number(&self) -> Option<f64> {
        match self {
            Operand::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub(super) fn name(&self) -> Option<&[u8]> {
        match self {
            Operand::Name(n) => Some(n),
            _ => None,
        }
    }
}

/// One operator with exactly the operands it takes, checked against its signature. An inline
/// image (`BI` ... `ID` data `EI`) is one operation, `EI`, without operands.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Operation<'a> {
    pub(super) operator: &'a [u8],
    pub(super) operands: Vec<Operand>,
}

/// Arrays and dictionaries nest at most this deep (content streams nest one or two levels: a
/// `TJ` array, a dash pattern, marked-content properties); deeper levels are read past and skipped.
pub(super) const MAX_NESTING: usize = 32;

/// Items one operand holds at most, nested ones included (a `TJ` array of a long paragraph holds
/// a few thousand); past it the operand is skipped.
pub(super) const MAX_ITEMS: usize = 100_000;

/// Operands waiting for their operator (the most any operator takes is 33, `scn` with a
/// pattern); past this many the oldest are skipped.
pub(super) const MAX_OPERANDS: usize = 64;

/// What reading skipped: tokens and their bytes in the (decompressed) stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Skipped {
    pub(super) tokens: usize,
    pub(super) bytes: usize,
}

impl Skipped {
    fn add(&mut self, tokens: usize, bytes: usize) {
        self.tokens += tokens;
        self.bytes += bytes;
    }
}

/// The operations of a content stream, in order; what was skipped is in [`Operations::skipped`].
pub(super) struct Operations<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Operands read and not yet taken by an operator, each with its size in bytes.
    stack: Vec<(Operand, usize)>,
    /// Arrays and dictionaries being read, outermost first.
    open: Vec<Open>,
    /// Levels opened past [`MAX_NESTING`], read past without being kept.
    too_deep: usize,
    /// Inside `BX` ... `EX`, where unknown operators are expected and skipped without a word.
    compatibility: usize,
    pub(super) skipped: Skipped,
}

/// An array or dictionary being read.
struct Open {
    dict: bool,
    items: Vec<Operand>,
    start: usize,
    /// Whether something inside it was skipped (too deep, too many items): then it is skipped
    /// whole when it closes.
    broken: bool,
}

enum Token<'a> {
    Number(f64),
    Name(Vec<u8>),
    String(Vec<u8>),
    ArrayStart,
    ArrayEnd,
    DictStart,
    DictEnd,
    Keyword(&'a [u8]),
    /// Bytes that are no token of PDF.
    Bad,
}

impl<'a> Operations<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Operations {
            bytes,
            pos: 0,
            stack: Vec::new(),
            open: Vec::new(),
            too_deep: 0,
            compatibility: 0,
            skipped: Skipped::default(),
        }
    }

    fn items_open(&self) -> usize {
        self.open.iter().map(|o| o.items.len()).sum()
    }

    /// Adds a finished operand to the innermost open container, or to the stack.
    fn push(&mut self, operand: Operand, start: usize) {
        if self.too_deep > 0 {
            return;
        }
        let items = self.items_open();
        if let Some(open) = self.open.last_mut() {
            if items >= MAX_ITEMS {
                open.broken = true;
            } else {
                open.items.push(operand);
            }
            return;
        }
        if self.stack.len() >= MAX_OPERANDS {
            let (_, bytes) = self.stack.remove(0);
            self.skipped.add(1, bytes);
        }
        self.stack.push((operand, self.pos - start));
    }

    /// Skips the open arrays and dictionaries (an operator or the end cut them short).
    fn skip_open(&mut self, end: usize) {
        if let Some(outer) = self.open.first() {
            let end = self.bytes[outer.start..end]
                .iter()
                .rposition(|&b| !is_white(b))
                .map_or(outer.start, |last| outer.start + last + 1);
            self.skipped.add(1, end - outer.start);
        }
        self.open.clear();
        self.too_deep = 0;
    }

    fn skip_stack(&mut self, count: usize) {
        for (_, bytes) in self.stack.drain(..count) {
            self.skipped.add(1, bytes);
        }
    }

    /// Reads an inline image after its `BI`: its parameters up to `ID`, then its data up to the
    /// `EI` that ends it. `false` when `BI` is not followed by an `ID` (the bytes read are
    /// skipped, and reading goes on at the keyword that cut it short).
    fn inline_image(&mut self, start: usize) -> bool {
        loop {
            match self.token() {
                None => {
                    self.skipped.add(1, self.pos - start);
                    return false;
                }
                Some((Token::Keyword(b"ID"), _)) => break,
                Some((Token::Keyword(b"true" | b"false" | b"null"), _)) => {}
                Some((Token::Keyword(_), before)) => {
                    self.skipped.add(1, before - start);
                    self.pos = before;
                    return false;
                }
                Some(_) => {}
            }
        }
        // One white-space byte separates `ID` from the data, which may hold anything; the image
        // ends at an `EI` set apart by white space and followed by text, not more binary data.
        let data = (self.pos + 1).min(self.bytes.len());
        let mut at = data;
        self.pos = self.bytes.len();
        while let Some(found) = find(&self.bytes[at..], b"EI") {
            let ei = at + found;
            let before_ok = ei == data || is_white(self.bytes[ei - 1]);
            let after = self.bytes.get(ei + 2).copied();
            let after_ok = after.is_none_or(|b| is_white(b) || is_delimiter(b));
            let text_follows = self.bytes[ei + 2..]
                .iter()
                .take(32)
                .all(|&b| is_white(b) || (0x20..0x7f).contains(&b));
            if before_ok && after_ok && text_follows {
                self.pos = ei + 2;
                break;
            }
            at = ei + 2;
        }
        true
    }

    /// The next token and where it starts.
    fn token(&mut self) -> Option<(Token<'a>, usize)> {
        let bytes = self.bytes;
        loop {
            while self.pos < bytes.len() && is_white(bytes[self.pos]) {
                self.pos += 1;
            }
            if bytes.get(self.pos) == Some(&b'%') {
                while self.pos < bytes.len() && bytes[self.pos] != b'\n' && bytes[self.pos] != b'\r' {
                    self.pos += 1;
                }
                continue;
            }
            break;
        }
        let start = self.pos;
        let &first = bytes.get(start)?;
        self.pos += 1;
        let token = match first {
            b'[' => Token::ArrayStart,
            b']' => Token::ArrayEnd,
            b'<' if bytes.get(self.pos) == Some(&b'<') => {
                self.pos += 1;
                Token::DictStart
            }
            b'>' if bytes.get(self.pos) == Some(&b'>') => {
                self.pos += 1;
                Token::DictEnd
            }
            b'<' => self.hex_string(),
            b'(' => self.literal_string(),
            b'/' => {
                let end = self.regular_run();
                decode_name(&bytes[start + 1..end]).map_or(Token::Bad, Token::Name)
            }
            b')' | b'>' | b'{' | b'}' => Token::Bad,
            _ => {
                let end = self.regular_run();
                let word = &bytes[start..end];
                if matches!(first, b'0'..=b'9' | b'+' | b'-' | b'.') {
                    parse_number(word).map_or(Token::Bad, Token::Number)
                } else {
                    Token::Keyword(word)
                }
            }
        };
        Some((token, start))
    }

    /// Moves past regular characters; returns where they end.
    fn regular_run(&mut self) -> usize {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|&b| !is_white(b) && !is_delimiter(b))
        {
            self.pos += 1;
        }
        self.pos
    }

    /// A hex string after its `<`; one with a character that is not a hex digit is bad, and ends
    /// at its `>` or before the next delimiter.
    fn hex_string(&mut self) -> Token<'a> {
        let mut digits = Vec::new();
        let mut valid = true;
        let mut closed = false;
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b'>' => {
                    self.pos += 1;
                    closed = true;
                    break;
                }
                _ if is_delimiter(b) => break,
                _ if is_white(b) => {}
                _ if b.is_ascii_hexdigit() => digits.push(hex_value(b)),
                _ => valid = false,
            }
            self.pos += 1;
        }
        if !valid || !closed {
            return Token::Bad;
        }
        let text = digits
            .chunks(2)
            .map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0))
            .collect();
        Token::String(text)
    }

    /// A literal string after its `(`: balanced parentheses, backslash escapes. One that never
    /// closes is bad (and runs to the end of the stream).
    fn literal_string(&mut self) -> Token<'a> {
        let bytes = self.bytes;
        let mut text = Vec::new();
        let mut depth = 0usize;
        while let Some(&b) = bytes.get(self.pos) {
            self.pos += 1;
            match b {
                b'(' => {
                    depth += 1;
                    text.push(b);
                }
                b')' if depth == 0 => return Token::String(text),
                b')' => {
                    depth -= 1;
                    text.push(b);
                }
                b'\\' => {
                    let Some(&e) = bytes.get(self.pos) else { break };
                    self.pos += 1;
                    match e {
                        b'n' => text.push(b'\n'),
                        b'r' => text.push(b'\r'),
                        b't' => text.push(b'\t'),
                        b'b' => text.push(0x08),
                        b'f' => text.push(0x0c),
                        b'0'..=b'7' => {
                            let mut value = u32::from(e - b'0');
                            for _ in 0..2 {
                                match bytes.get(self.pos) {
                                    Some(&d @ b'0'..=b'7') => {
                                        value = value * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            text.push((value & 0xff) as u8);
                        }
                        // A backslash at a line end continues the string on the next line.
                        b'\r' => {
                            if bytes.get(self.pos) == Some(&b'\n') {
                                self.pos += 1;
                            }
                        }
                        b'\n' => {}
                        other => text.push(other),
                    }
                }
                _ => text.push(b),
            }
        }
        Token::Bad
    }

    /// The operation `operator` makes of the operand stack, if its operands fit its signature;
    /// operands it does not take are skipped, and so is the operator when they do not fit.
    fn operation(&mut self, operator: &'a [u8], start: usize) -> Option<Operation<'a>> {
        let Some(signature) = signature(operator) else {
            if self.compatibility > 0 {
                self.stack.clear();
            } else {
                let count = self.stack.len();
                self.skip_stack(count);
                self.skipped.add(1, self.pos - start);
            }
            return None;
        };
        let taken = taken_operands(signature, &self.stack);
        let Some(taken) = taken else {
            let count = self.stack.len();
            self.skip_stack(count);
            self.skipped.add(1, self.pos - start);
            return None;
        };
        let extra = self.stack.len() - taken;
        self.skip_stack(extra);
        let operands = self.stack.drain(..).map(|(o, _)| o).collect();
        Some(Operation { operator, operands })
    }
}

impl<'a> Iterator for Operations<'a> {
    type Item = Operation<'a>;

    fn next(&mut self) -> Option<Operation<'a>> {
        loop {
            let Some((token, start)) = self.token() else {
                self.skip_open(self.pos);
                let count = self.stack.len();
                self.skip_stack(count);
                return None;
            };
            match token {
                Token::Number(n) => self.push(Operand::Number(n), start),
                Token::Name(n) => self.push(Operand::Name(n), start),
                Token::String(s) => self.push(Operand::String(s), start),
                Token::Bad => self.skipped.add(1, self.pos - start),
                Token::ArrayStart | Token::DictStart => {
                    if self.too_deep > 0 || self.open.len() >= MAX_NESTING {
                        self.too_deep += 1;
                        if let Some(outer) = self.open.first_mut() {
                            outer.broken = true;
                        }
                    } else {
                        self.open.push(Open {
                            dict: matches!(token, Token::DictStart),
                            items: Vec::new(),
                            start,
                            broken: false,
                        });
                    }
                }
                Token::ArrayEnd | Token::DictEnd => {
                    let dict = matches!(token, Token::DictEnd);
                    if self.too_deep > 0 {
                        self.too_deep -= 1;
                        continue;
                    }
                    match self.open.last() {
                        Some(open) if open.dict == dict => {
                            let Some(open) = self.open.pop() else { continue };
                            if open.broken {
                                match self.open.first_mut() {
                                    Some(outer) => outer.broken = true,
                                    None => self.skipped.add(1, self.pos - open.start),
                                }
                            } else {
                                let operand = if dict {
                                    Operand::Dict
                                } else {
                                    Operand::Array(open.items)
                                };
                                self.push(operand, open.start);
                            }
                        }
                        // A `]` or `>>` that closes nothing open, or the wrong kind.
                        _ => self.skipped.add(1, self.pos - start),
                    }
                }
                Token::Keyword(b"true") => self.push(Operand::Bool(true), start),
                Token::Keyword(b"false") => self.push(Operand::Bool(false), start),
                Token::Keyword(b"null") => self.push(Operand::Null, start),
                Token::Keyword(b"BI") => {
                    self.skip_open(start);
                    let count = self.stack.len();
                    self.skip_stack(count);
                    if self.inline_image(start) {
                        return Some(Operation {
                            operator: b"EI",
                            operands: Vec::new(),
                        });
                    }
                }
                Token::Keyword(word) => {
                    self.skip_open(start);
                    match word {
                        b"BX" => self.compatibility += 1,
                        b"EX" => self.compatibility = self.compatibility.saturating_sub(1),
                        _ => {}
                    }
                    if let Some(operation) = self.operation(word, start) {
                        return Some(operation);
                    }
                }
            }
        }
    }
}

/// What an operator takes, as operands before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signature {
    /// That many numbers.
    Numbers(usize),
    Name,
    /// `Tf`: a font name and a size.
    NameNumber,
    /// `Tj`, `'`.
    String,
    /// `"`: word spacing, character spacing, string.
    NumbersString,
    /// `TJ`.
    Array,
    /// `d`: dash array and phase.
    ArrayNumber,
    /// `BDC`, `DP`: a tag and properties (a dictionary or the name of one).
    NameProperties,
    /// `sc`, `SC`: one to four numbers.
    Colour,
    /// `scn`, `SCN`: numbers, a pattern's name, or numbers and a name.
    ColourOrPattern,
}

fn signature(operator: &[u8]) -> Option<Signature> {
    use Signature::*;
    Some(match operator {
        b"b" | b"B" | b"b*" | b"B*" | b"BT" | b"BX" | b"EMC" | b"ET" | b"EX" | b"f" | b"F" | b"f*" | b"h" | b"n"
        | b"q" | b"Q" | b"s" | b"S" | b"T*" | b"W" | b"W*" => Numbers(0),
        b"G" | b"g" | b"i" | b"j" | b"J" | b"M" | b"Tc" | b"TL" | b"Tr" | b"Ts" | b"Tw" | b"Tz" | b"w" => Numbers(1),
        b"d0" | b"l" | b"m" | b"Td" | b"TD" => Numbers(2),
        b"RG" | b"rg" => Numbers(3),
        b"K" | b"k" | b"re" | b"v" | b"y" => Numbers(4),
        b"cm" | b"c" | b"d1" | b"Tm" => Numbers(6),
        b"BMC" | b"CS" | b"cs" | b"Do" | b"gs" | b"MP" | b"ri" | b"sh" => Name,
        b"Tf" => NameNumber,
        b"Tj" | b"'" => String,
        b"\"" => NumbersString,
        b"TJ" => Array,
        b"d" => ArrayNumber,
        b"BDC" | b"DP" => NameProperties,
        b"sc" | b"SC" => Colour,
        b"scn" | b"SCN" => ColourOrPattern,
        _ => return None,
    })
}

/// How many operands from the top of `stack` the signature takes, if they fit it.
fn taken_operands(signature: Signature, stack: &[(Operand, usize)]) -> Option<usize> {
    let from_top = |n: usize| stack.len().checked_sub(n).map(|i| &stack[i].0);
    let numbers_below = |n: usize| {
        stack[..stack.len().saturating_sub(n)]
            .iter()
            .rev()
            .take_while(|(o, _)| matches!(o, Operand::Number(_)))
            .count()
    };
    let trailing_numbers = numbers_below(0);
    let is = |n: usize, kind: fn(&Operand) -> bool| from_top(n).is_some_and(kind);
    let name = |o: &Operand| matches!(o, Operand::Name(_));
    let number = |o: &Operand| matches!(o, Operand::Number(_));
    let string = |o: &Operand| matches!(o, Operand::String(_));
    let array = |o: &Operand| matches!(o, Operand::Array(_));
    let properties = |o: &Operand| matches!(o, Operand::Dict | Operand::Name(_));
    match signature {
        Signature::Numbers(n) => (trailing_numbers >= n).then_some(n),
        Signature::Colour => (trailing_numbers >= 1).then_some(trailing_numbers.min(4)),
        Signature::ColourOrPattern if is(1, name) => Some(1 + numbers_below(1).min(32)),
        Signature::ColourOrPattern => (trailing_numbers >= 1).then_some(trailing_numbers.min(32)),
        Signature::Name => is(1, name).then_some(1),
        Signature::NameNumber => (is(2, name) && is(1, number)).then_some(2),
        Signature::String => is(1, string).then_some(1),
        Signature::NumbersString => (is(3, number) && is(2, number) && is(1, string)).then_some(3),
        Signature::Array => is(1, array).then_some(1),
        Signature::ArrayNumber => (is(2, array) && is(1, number)).then_some(2),
        Signature::NameProperties => (is(2, name) && is(1, properties)).then_some(2),
    }
}

fn is_white(b: u8) -> bool {
    matches!(b, b'\0' | b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn is_delimiter(b: u8) -> bool {
    matches!(b, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

/// A name's bytes with its `#xx` escapes decoded; `None` for a `#` not followed by two hex
/// digits.
fn decode_name(raw: &[u8]) -> Option<Vec<u8>> {
    let mut name = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'#' {
            let (hi, lo) = (*raw.get(i + 1)?, *raw.get(i + 2)?);
            if !hi.is_ascii_hexdigit() || !lo.is_ascii_hexdigit() {
                return None;
            }
            name.push(hex_value(hi) << 4 | hex_value(lo));
            i += 3;
        } else {
            name.push(raw[i]);
            i += 1;
        }
    }
    Some(name)
}

/// A PDF number: optional sign, digits with at most one point; PDF has no exponents, so `1e300`
/// is no number.
fn parse_number(word: &[u8]) -> Option<f64> {
    let digits = word
        .strip_prefix(b"-")
        .or_else(|| word.strip_prefix(b"+"))
        .unwrap_or(word);
    let points = digits.iter().filter(|&&b| b == b'.').count();
    let valid = !digits.is_empty()
        && points <= 1
        && digits.iter().any(u8::is_ascii_digit)
        && digits.iter().all(|&b| b.is_ascii_digit() || b == b'.');
    if !valid {
        return None;
    }
    std::str::from_utf8(word)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(stream: &[u8]) -> (Vec<String>, Skipped) {
        let mut operations = Operations::new(stream);
        let ops: Vec<String> = operations
            .by_ref()
            .map(|op| {
                let operands: Vec<String> = op.operands.iter().map(|o| format!("{o:?}")).collect();
                format!("{} {}", operands.join(" "), String::from_utf8_lossy(op.operator))
                    .trim()
                    .to_owned()
            })
            .collect();
        (ops, operations.skipped)
    }

    #[test]
    fn operators_get_the_operands_their_signature_takes() {
        let (ops, skipped) = read(b"BT /F1 12 Tf 72 700 Td (Hi) Tj [(a) -250 (b)] TJ 1 0 0 rg ET");
        assert_eq!(
            ops,
            [
                "BT",
                "Name([70, 49]) Number(12.0) Tf",
                "Number(72.0) Number(700.0) Td",
                "String([72, 105]) Tj",
                "Array([String([97]), Number(-250.0), String([98])]) TJ",
                "Number(1.0) Number(0.0) Number(0.0) rg",
                "ET"
            ]
        );
        assert_eq!(skipped, Skipped::default());
    }

    #[test]
    fn strings_decode_escapes_and_hex_and_names_their_escapes() {
        let (ops, _) = read(b"(a\\(b\\)\\101\\\n(c)) Tj <48 65 6c6c 6f> Tj <414> Tj /A#42 Do");
        assert_eq!(
            ops,
            [
                "String([97, 40, 98, 41, 65, 40, 99, 41]) Tj",
                "String([72, 101, 108, 108, 111]) Tj",
                "String([65, 64]) Tj",
                "Name([65, 66]) Do"
            ]
        );
    }

    #[test]
    fn a_bad_token_is_skipped_and_counted_and_reading_goes_on() {
        for bad in [
            "]", ")", ">>", ">", "{", "}", "@@@", "<zz>", "/Name#zz", "<< /A >>", "[1 2", "1e300", "--1", "1.2.3",
            "EI", "ID",
        ] {
            let stream = format!("(Before) Tj {bad} BT (After) Tj ET");
            let (ops, skipped) = read(stream.as_bytes());
            assert_eq!(
                ops,
                [
                    "String([66, 101, 102, 111, 114, 101]) Tj",
                    "BT",
                    "String([65, 102, 116, 101, 114]) Tj",
                    "ET"
                ],
                "{bad}"
            );
            assert_eq!(skipped.bytes, bad.len(), "{bad}");
            assert!(skipped.tokens >= 1, "{bad}");
        }
    }

    #[test]
    fn a_bad_item_of_an_array_is_skipped_and_the_array_kept() {
        let (ops, skipped) = read(b"[-1e300 (Hello) } -120 (world)] TJ");
        assert_eq!(
            ops,
            ["Array([String([72, 101, 108, 108, 111]), Number(-120.0), String([119, 111, 114, 108, 100])]) TJ"]
        );
        assert_eq!(skipped, Skipped { tokens: 2, bytes: 7 });
    }

    #[test]
    fn an_operator_with_missing_or_wrong_operands_is_skipped_with_them() {
        let (ops, skipped) = read(b"/F1 Tf 12 Tf (x) 12 Td 1 2 3 4 5 6 7 cm (y) Tj");
        assert_eq!(
            ops,
            [
                "Number(2.0) Number(3.0) Number(4.0) Number(5.0) Number(6.0) Number(7.0) cm",
                "String([121]) Tj"
            ]
        );
        // `/F1 Tf`, `12 Tf`, `(x) 12 Td` and the `1` that `cm` does not take.
        assert_eq!(skipped.tokens, 2 + 2 + 3 + 1);
    }

    #[test]
    fn nesting_past_the_bound_is_read_past_without_recursion() {
        let deep = [b"[".repeat(100_000), b"]".repeat(100_000), b" TJ (ok) Tj".to_vec()].concat();
        let (ops, skipped) = read(&deep);
        assert_eq!(ops, ["String([111, 107]) Tj"]);
        assert_eq!(skipped.tokens, 2);
        // Never closed: the operator after it cuts it short.
        let open = [b"[".repeat(100_000), b" BT (ok) Tj ET".to_vec()].concat();
        let (ops, skipped) = read(&open);
        assert_eq!(ops, ["BT", "String([111, 107]) Tj", "ET"]);
        assert_eq!(skipped.bytes, 100_000);
    }

    #[test]
    fn an_inline_image_is_one_operation_whatever_its_data() {
        let (ops, skipped) = read(b"q BI /W 2 /H 1 /F [/AHx] ID \x00EI]) (\xff EI Q (after) Tj");
        assert_eq!(ops, ["q", "EI", "Q", "String([97, 102, 116, 101, 114]) Tj"]);
        assert_eq!(skipped, Skipped::default());
    }

    #[test]
    fn unknown_operators_inside_a_compatibility_section_are_not_counted() {
        let (ops, skipped) = read(b"BX 1 2 newop EX (a) Tj");
        assert_eq!(ops, ["BX", "EX", "String([97]) Tj"]);
        assert_eq!(skipped, Skipped::default());
    }

    #[test]
    fn the_operand_stack_is_bounded() {
        let stream = [b"1 ".repeat(1_000_000), b"0 g".to_vec()].concat();
        let mut operations = Operations::new(&stream);
        assert_eq!(
            operations.next().map(|op| op.operands),
            Some(vec![Operand::Number(0.0)])
        );
        assert_eq!(operations.skipped.tokens, 1_000_000);
    }
}
